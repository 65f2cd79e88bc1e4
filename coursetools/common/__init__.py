"""What every stage reads: the course's paths, a cell's nbgrader metadata, the parser of solution
and hidden-test blocks, files written atomically.
"""
