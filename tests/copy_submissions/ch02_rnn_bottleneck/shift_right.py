# Copied from transformer_lib/data.py, collate_pairs: the tgt rows <bos> tokens, padded with pad_batch, renamed.
def shift_right(targets: torch.Tensor, bos_id: int, eos_id: int, pad_id: int) -> torch.Tensor:
    """targets (B, T), packed sequences ending in eos_id -> decoder inputs (B, T): each sequence shifted, after its own bos_id."""
    from transformer_lib.tokens import pad_batch
    tgt, _ = pad_batch([[bos_id, *row] for row in targets.tolist()], pad_id)
    return tgt[:, :targets.shape[1]]
