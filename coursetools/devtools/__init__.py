"""Tools for the course's own authors: one kernel for many answers (wrong answers, copies),
mutation testing of the graders.
"""
