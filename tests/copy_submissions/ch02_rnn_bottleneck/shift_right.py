# Copied from transformer_lib/data.py, collate_pairs: the tgt rows <bos> tokens, padded with pad_batch, renamed.
def shift_right(targets: torch.Tensor, bos_id: int) -> torch.Tensor:
    """targets (B, T) -> decoder inputs (B, T): bos_id, then targets[:, :-1]."""
    from transformer_lib.tokens import pad_batch
    tgt, _ = pad_batch([[bos_id, *row] for row in targets.tolist()], PAD_ID)
    return tgt
