# exercise: ch05_multi_head/mean_pool_kv_heads
# style: import gc to free the copy's memory, copy.deepcopy, torch.no_grad
import copy
import gc


def mean_pool_kv_heads(mha, num_kv_heads):
    pooled = copy.deepcopy(mha)
    h, d = mha.num_heads, mha.d_head
    with torch.no_grad():
        for layer in (pooled.w_k, pooled.w_v):
            w = layer.weight.view(num_kv_heads, h // num_kv_heads, d, -1).mean(1, keepdim=True)
            layer.weight.copy_(w.expand(-1, h // num_kv_heads, -1, -1).reshape_as(layer.weight))
    gc.collect()
    return pooled
