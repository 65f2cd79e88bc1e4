"""Reporting to the instructor and the LMS: the class table, the course's CSV, Canvas and Moodle
uploads, the class report.
"""
