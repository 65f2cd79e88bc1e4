"""Course tooling: assignment sources and their lint, tamper-resistant checks, nbgrader plumbing, grading.

Kept apart from :mod:`transformer_lib` so that the library reads as a Transformer library.
"""
