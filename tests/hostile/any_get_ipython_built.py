# exercise: ch06_positional/alibi_recent_share
# attack: get_ipython reached by a name built from strings
import IPython

shell = getattr(IPython, "get_" + "ipython")()


def alibi_recent_share(bias, window):
    return shell
