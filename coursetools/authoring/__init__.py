"""Authoring an assignment: the text source, its lint and fairness rules, the release (proved by
grading the model solution and the stub), the student edition.
"""
