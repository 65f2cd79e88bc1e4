"""Grading a class: submissions collected, each one autograded confined and under limits (hidden
blocks in the checker), its status, the gradebook, feedback without hidden tests.
"""
