"""Closed-form bounds of the seeds, one pure function each, with its reference.

Pages, the claims registry and the tests read every bound here, so each lives in one place.
"""
