"""Names the checker (grading process) and the bridge (student kernel) agree on, in a module that
imports nothing: the kernel imports it without the checker's code."""

LOCKED_MODULE = "__locked_cells_"  # the module of the locked cells' classes: checker ``__locked_cells_<n>``
COMM_TARGET = "coursetools.checks.bridge"  # the comm the checker opens and the bridge answers
END_SERVING = b"end"  # what the checker sends, in place of a request's number, at the end of a hidden block
READY = b"ready"  # what the bridge sends, before the serve request's number, once it serves
ENTRY = b"entry"  # what the bridge sends to ask the checker for one entry of a fake's table, and what comes back
