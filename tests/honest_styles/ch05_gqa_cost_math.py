# exercise: ch05_multi_head/gqa_cost
# style: plain arithmetic with math and a dict
import math


def gqa_cost(d_model, num_heads, num_kv_heads, seq_len, bytes_per_value=2):
    d_head = d_model // num_heads
    params = d_model * d_model * 2 + 2 * d_model * num_kv_heads * d_head
    cache = 2 * seq_len * num_kv_heads * d_head * bytes_per_value
    return {"params": params, "cache_bytes": cache, "log2_cache": math.log2(cache) if cache else 0.0}
