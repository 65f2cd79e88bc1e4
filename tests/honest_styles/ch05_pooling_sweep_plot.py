# exercise: ch05_multi_head/pooling_sweep
# style: a sweep with a matplotlib figure, its size set through plt.rcParams
import matplotlib.pyplot as plt

plt.rcParams["figure.figsize"] = (5, 3)


def pooling_sweep(mha, x, groups=(1, 2, 4)):
    errors = {}
    for g in groups:
        pooled = mean_pool_kv_heads(mha, g)
        errors[g] = relative_output_error(mha, pooled, x)
    plt.plot(list(errors), list(errors.values()), marker="o")
    return errors
