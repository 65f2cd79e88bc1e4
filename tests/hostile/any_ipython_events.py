# exercise: ch10_beyond/packed_attention
# attack: a hook registered on every cell the grader runs
get_ipython().events.register("pre_run_cell", lambda *a: print("seen"))


def packed_attention(q, k, v, lengths):
    return None
