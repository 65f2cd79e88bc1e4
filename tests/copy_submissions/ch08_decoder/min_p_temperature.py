# A lazy combination: the exercise's part (a) tried at growing temperatures (the page's temperature sweep), the first that keeps k tokens returned.
def min_p_temperature(logits, min_p, k):
    tau = 0.01
    while int((min_p_distribution(logits, min_p, temperature=tau) > 0).sum()) < k:
        tau *= 1.1
    return tau
