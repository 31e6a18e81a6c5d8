"""What several test files of the package share."""

import flcc


def gpu_usable():
    """Whether this build has GPU solvers and a usable GPU."""
    try:
        flcc.Plan("conv", (8, 8), (3, 3), platform="device", rigor="estimate")
        return True
    except flcc.Error:
        return False
