# exercise: ch11_modern/merge_attention
# attack: a module imported by a name built at run time
mod = __import__("coursetools" + ".checks", fromlist=["x"])


def merge_attention(out_a, lse_a, out_b, lse_b):
    return mod
