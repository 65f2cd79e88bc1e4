# exercise: ch01_tokens/pad_left
# attack: the tamper guard's code object swapped
import coursetools.checks as c

c.verify_untampered.__code__ = (lambda: None).__code__


def pad_left(sequences, pad_id=0):
    return None
