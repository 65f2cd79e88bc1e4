"""Shared by the library's tests: a tiny encoder-decoder that keeps the decoding protocol."""

import torch
from torch import nn

from transformer_lib.data import BOS_ID, PAD_ID


class TinyEncDec(nn.Module):
    """A small causal encoder-decoder: mean-pooled source plus a GRU over the prefix.

    Keeps the encoder-decoder protocol; the decoding and training tests use it.
    """

    def __init__(self, vocab_size=11, d=16, dropout=0.0):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, d)
        self.rnn = nn.GRU(d, d, batch_first=True)
        self.drop = nn.Dropout(dropout)
        self.out = nn.Linear(d, vocab_size)
        with torch.no_grad():
            self.out.bias[[PAD_ID, BOS_ID]] = -1e4  # a trained model never says these

    def encode(self, src):
        return self.emb(src).mean(dim=1, keepdim=True)  # (B, 1, d)

    def decode(self, tgt, memory, src):
        hidden, _ = self.rnn(self.drop(self.emb(tgt) + memory))
        return self.out(hidden)

    def forward(self, src, tgt):
        return self.decode(tgt, self.encode(src), src)
