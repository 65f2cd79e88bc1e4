"""Names the checker (grading process) and the bridge (student kernel) agree on, in a module that
imports nothing: the kernel imports it without the checker's code."""

LOCKED_MODULE = "__locked_cells_"  # the module of the locked cells' classes: checker ``__locked_cells_<n>``
COMM_TARGET = "coursetools.checks.bridge"  # the comm the checker opens and the bridge answers
END_SERVING = b"end"  # what the checker sends, in place of a request's number, at the end of a hidden block
READY = b"ready"  # what the bridge sends, before the serve request's number, once it serves
ENTRY = b"entry"  # what the bridge sends to ask the checker for one entry of a fake's table, and what comes back

# The one "no autograd" rule (``coursetools.checks.no_autograd``), the same in every exercise that asks
# for a gradient by hand: every way torch differentiates for the answer, as (owner, names), the owner a
# dotted module or class. The kernel refuses each of them (and each Tensor method of the same name), runs
# the answer with gradients off and refuses every torch call made with gradients switched back on; the
# submission scan reports an answer cell that names one.
NO_AUTOGRAD = (
    ("torch.autograd", ("grad", "backward", "enable_grad")),
    ("torch.autograd.functional", ("vjp", "jvp", "jacobian", "hessian", "hvp", "vhp")),
    ("torch.autograd.forward_ad", ("make_dual", "unpack_dual")),
    ("torch.func", ("grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "linearize",
                    "functional_call")),
    ("torch.Tensor", ("backward",)),
    ("torch", ("enable_grad",)),
)
NO_AUTOGRAD_MESSAGE = ("this exercise asks for the gradient by hand: your solution used autograd (torch.autograd, "
                       "Tensor.backward, torch.func or gradients switched back on)")
