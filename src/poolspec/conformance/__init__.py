"""The conformance suite: the case catalogue, the shipped torch 2.13 reference vectors, and the runner.

>>> from poolspec import conformance
>>> report = conformance.run("numpy", ops=["avg_pool2d"])
>>> report.passed
True
"""

from .runner import CaseResult, Implementation, Report, check, module_implementation, run

__all__ = ["CaseResult", "Implementation", "Report", "check", "module_implementation", "run"]
