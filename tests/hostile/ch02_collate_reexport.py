# exercise: ch02_rnn_bottleneck/shift_right
# attack: the library's collation, imported from the package instead of its module
import transformer_lib.data as d


def shift_right(targets, bos_id, pad_id=0):
    return d.collate_pairs([([0], row.tolist()) for row in targets])[1]
