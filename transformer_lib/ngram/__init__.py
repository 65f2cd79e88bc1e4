"""A counted n-gram language model: the baseline a neural language model has to beat.

The model counts every n-gram of orders 1..n in a training sequence (characters of a ``str``, or
any list of hashable, sortable symbols such as token ids) and predicts the next symbol from at most
``n - 1`` preceding ones. Jurafsky & Martin, *Speech and Language Processing*, ch. 3, derive the
smoothings below; Chen & Goodman (1999) compare them.

**Interpolation.** Write ``h`` for a context of ``k - 1`` symbols, ``h'`` for ``h`` without its
oldest symbol, ``c(h w)`` for a count and ``P_{k-1}`` for the model one order lower. Each order
takes a discount ``D(c)`` from every count and hands the mass it frees to the order below::

    P_k(w | h) = ( c(h w) - D(c(h w))  +  gamma(h) * P_{k-1}(w | h') ) / c(h .)

    gamma(h) = D_1 N_1(h .) + D_2 N_2(h .) + D_3+ N_3+(h .)

where ``c(h .) = sum_w c(h w)``, ``D(0) = 0``, and ``N_r(h .)`` is the number of distinct ``w``
with ``c(h w) = r`` (``N_3+``: at least 3). ``gamma(h)`` is exactly the mass taken, so every
``P_k`` sums to one. A context never seen (``c(h .) = 0``) passes the lower order through
unchanged: ``P_k(w | h) = P_{k-1}(w | h')``. Three smoothings fill in ``D`` and ``c``:

* ``"absolute"``: one discount ``D`` for every count (``D_1 = D_2 = D_3+ = D``, so
  ``gamma(h) = D N_1+(h .)``) and raw counts at every order (Ney, Essen & Kneser, 1994).
* ``"kneser-ney"``: one discount ``D``, raw counts at the highest order in use, and *continuation
  counts* ``N_1+(. h w)`` below it, the number of distinct symbols seen before ``h w`` (Kneser &
  Ney, 1995; the interpolated form of Chen & Goodman, 1999, section 3.5). A lower order is only
  consulted when the longer context says little, so it should rate ``w`` by how many contexts it
  completes, not by how often it occurs (the classic example: "Francisco" is frequent but follows
  almost only "San").
* ``"modified-kneser-ney"``: the same counts with three discounts ``D_1, D_2, D_3+`` per order *and
  per kind of counts* (raw, continuation), each set from that table's count-of-counts ``n_r``
  (how many of its grams have count exactly ``r``) by Chen & Goodman's eq. 26 (section 3.6)::

      Y = n_1 / (n_1 + 2 n_2),  D_1 = 1 - 2 Y n_2 / n_1,  D_2 = 2 - 3 Y n_3 / n_2,  D_3+ = 3 - 4 Y n_4 / n_3

  then multiplied by one common ``scale``, tuned on validation (:func:`modified_kneser_ney_discounts`
  says how a table too small for the estimate, or a scale too large, is handled).

The one setting each smoothing takes is named ``discount`` (``D``, between 0 and 1) for
``"kneser-ney"`` and ``"absolute"``, and ``scale`` (a positive factor on the estimated discounts)
for ``"modified-kneser-ney"``; :attr:`NGramLM.setting` is whichever applies.

Below the unigram lies a uniform distribution over the vocabulary **plus one**: every symbol never
seen in training falls into one extra class, "unknown", that receives ``1 / (V + 1)`` of the
unigram's interpolation mass. So probabilities over the vocabulary and the unknown class sum to
one, and the loss of any text is finite.

**Shorter contexts.** At the start of a text (or a window, or a sequence) a symbol has fewer than
``n - 1`` predecessors; it is predicted from the ones it has: by the model of that lower order,
with raw counts at its top. Per position, the number of usable predecessors caps the order.

**Counting with arrays.** Symbols become ids ``0..V-1`` (the sorted vocabulary; an unseen symbol is
``V``). The k-grams get dense ids one order at a time: the k-gram ending at position ``i`` has the
key ``id_{k-1}(gram ending at i - 1) * V + symbol_i``, and ``np.unique`` of the keys numbers the
distinct ones in sorted order, which is (context, symbol) order, because the (k-1)-gram ids are
themselves sorted. The context of a k-gram is ``key // V``; a look-up is ``np.searchsorted``. The
continuation count of a k-gram is how many distinct (k+1)-grams end in it: one occurrence of each
(k+1)-gram gives its suffix's id, and ``np.bincount`` counts them. Each order keeps its keys and
counts, and per context the total and the number of followers of count 1, 2 and >= 3, in the
smallest unsigned integer type that holds them (:attr:`NGramLM.nbytes`).

**Scoring** is one vectorised pass per order over a whole stream: the chain starts at
``p_0 = 1 / (V + 1)``; at order ``k`` it computes, from the same ``p_{k-1}``, the probability with
raw counts (kept by the positions whose cap is ``k``) and the one with lower-order counts (carried
on to order ``k + 1``). :meth:`NGramLM.nll`, :meth:`NGramLM.loss`, :meth:`NGramLM.prob`,
:func:`windows_nll` and :func:`sequences_nll` all go through it.

**The best counted model.** A neural model is read against the strongest counted model, not a
fixed order: :func:`best_counted_model` counts order 1, 2, 3, ... one at a time, scores the
validation split with every setting of a grid at each order (sharing the counts), and stops at
the first order whose best validation loss is not below the previous order's (or at a limit). It
keeps the order and setting with the lowest validation loss, and reports that model's loss on a
test split, which took no part in the choice. With ``block_size`` set, both splits are scored as a
language model of that context is: cut into non-overlapping windows of ``block_size + 1``
symbols, each window's last ``block_size`` symbols predicted from the earlier ones of the same
window. On the shipped Python corpus (3.9 million training characters, 96 symbols) each order
costs about 0.7 s of one core, counting and scoring 220 000 validation characters with the 12
scales of :data:`SCALES` together; the counts of orders 1-17 take 360 MiB, those of 1-40 1.5 GiB.
"""


from .counting import DISCOUNT_MARGIN, DISCOUNTS, FALLBACK_DISCOUNTS, SCALES, SMOOTHINGS, modified_kneser_ney_discounts
from .model import NGramLM, losses_by_setting, sequences_nll, windows_nll
from .search import CountedBaseline, best_counted_model

__all__ = ["NGramLM", "CountedBaseline", "best_counted_model", "windows_nll", "sequences_nll", "losses_by_setting",
           "modified_kneser_ney_discounts", "SMOOTHINGS", "DISCOUNTS", "SCALES", "FALLBACK_DISCOUNTS",
           "DISCOUNT_MARGIN"]
