"""MACE's parametrisation, shared by the PyMC model, the compiled density and EM: the
arcsine scale of flat competence, the sum-to-zero decomposition of the hierarchical cell
means, and the dims and coordinates of every reported variable.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.special import expit, logit

from raterstats.lazy import LazyModule
from raterstats.models.latent_class.data import LatentClassData

if TYPE_CHECKING:
    import pytensor.tensor as pt
else:
    pt = LazyModule("pytensor.tensor")


def arcsine_to_unit(u: np.ndarray) -> np.ndarray:
    """Competence from the arcsine scale: ``sin^2(pi/2 logistic(u))``.

    Examples
    --------
    >>> import numpy as np
    >>> arcsine_to_unit(np.array([0.0])).round(6)
    array([0.5])
    """
    return np.asarray(np.sin(0.5 * np.pi * expit(u)) ** 2)


def unit_to_arcsine(theta: np.ndarray) -> np.ndarray:
    """Inverse of :func:`arcsine_to_unit`: ``logit(2/pi arcsin(sqrt(theta)))``.

    Examples
    --------
    >>> import numpy as np
    >>> theta = np.array([0.01, 0.5, 0.99])
    >>> np.allclose(arcsine_to_unit(unit_to_arcsine(theta)), theta)
    True
    """
    return np.asarray(logit(np.arcsin(np.sqrt(theta)) / (0.5 * np.pi)))


def arcsine_beta_logp_pt(u: Any, a: float, b: float) -> tuple[Any, Any, Any]:
    """Beta(a, b) log density of flat MACE's competence on the arcsine scale, with
    ``log theta`` and ``log(1 - theta)`` (PyTensor; elementwise in ``u``).

    ``theta = sin^2(phi)``, ``phi = pi/2 logistic(u)``. Under Beta(1/2, 1/2), the arcsine
    law, ``phi`` is uniform, so ``u`` is standard logistic a priori; on the logit scale the
    same prior has exponential tails half as steep, and a rater whose ratings say little
    about competence (a near spammer, or one with few ratings) leaves NUTS in those tails.
    On the product data of Zheng et al. (2017) the arcsine scale doubled the smallest bulk
    ESS (see the MACE card). The compiled density uses the same coordinates and formulas
    (:func:`raterstats.models.latent_class.kernels_density.arcsine_log_sin`).

    Examples
    --------
    >>> import numpy as np
    >>> lp, log_t, log_1mt = arcsine_beta_logp_pt(np.array([0.0]), 0.5, 0.5)
    >>> np.round([lp.eval()[0], np.exp(log_t.eval()[0])], 4)  # log(1/4), theta = 1/2
    array([-1.3863,  0.5   ])
    """
    u = pt.as_tensor_variable(u)

    def log_sin(v: Any) -> Any:
        # log sin(pi/2 logistic(v)), = log(pi/2) + v where sin z = z (z < 1e-13)
        inner = pt.log(pt.sin(0.5 * np.pi * pt.sigmoid(pt.maximum(v, -30.0))))
        return pt.switch(v < -30.0, math.log(0.5 * np.pi) + v, inner)

    ls, lc = log_sin(u), log_sin(-u)
    norm = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    lp = (
        (2 * a - 1) * ls
        + (2 * b - 1) * lc
        + math.log(math.pi)
        - pt.softplus(-u)
        - pt.softplus(u)
        - norm
    )
    return lp, 2 * ls, 2 * lc


def decomposition(beta: Any, D: int | None = None, G: int | None = None) -> dict[str, Any]:
    """Sum-to-zero decomposition of the logit cell means ``beta (..., D, G)``:
    ``mu + alpha_d + gamma_g + (alpha gamma)_dg`` (NumPy arrays or PyTensor tensors;
    leading axes are draws).

    Examples
    --------
    >>> out = decomposition(np.array([[1.0, 2.0], [3.0, 6.0]]))
    >>> float(out["competence_mu"]), out["design_effect"].tolist()
    (3.0, [-1.0, 1.0])
    """
    if D is None or G is None:
        D, G = beta.shape[-2:]
    mu = beta.mean(axis=(-2, -1))
    alpha = beta.mean(axis=-1) - mu[..., None]
    gamma = beta.mean(axis=-2) - mu[..., None]
    out = {"competence_mu": mu}
    if D > 1:
        out["dimension_effect"] = alpha
    if G > 1:
        out["design_effect"] = gamma
    if D > 1 and G > 1:
        out["dimension_design_effect"] = (
            beta - mu[..., None, None] - alpha[..., :, None] - gamma[..., None, :]
        )
    return out


def var_dims(data: LatentClassData) -> dict[str, tuple[str, ...]]:
    """Dims of MACE's reported variables (point estimates and draws alike)."""
    return {
        "competence": ("rater", "dimension", "design"),
        "spam": ("rater", "dimension", "category"),
        "prevalence": ("dimension", "category"),
        "competence_cell_mean": ("dimension", "design"),
        "rater_effect": ("rater",),
        "cell_effect": ("rater", "dimension", "design"),
        "competence_mu": (),
        "dimension_effect": ("dimension",),
        "design_effect": ("design",),
        "dimension_design_effect": ("dimension", "design"),
    }


#: dims of the hierarchical model's scales and zero-sum basis coordinates
BASIS_DIMS: dict[str, tuple[str, ...]] = {
    "rater_sd": (),
    "cell_sd": (),
    "rater_z": ("rater_basis",),
    "rater_effect_basis": ("rater_basis",),
    "cell_z": ("rater_basis", "cell_basis"),
    "cell_effect_basis": ("rater_basis", "cell_basis"),
}


def basis_coords(data: LatentClassData) -> dict[str, list[int]]:
    """Coordinates of the zero-sum bases: ``R - 1`` over raters, ``D * G - 1`` over the
    dimension x design cells."""
    n_cells = len(data.dimensions) * len(data.designs)
    return {
        "rater_basis": list(range(len(data.raters) - 1)),
        "cell_basis": list(range(n_cells - 1)),
    }


__all__ = [
    "BASIS_DIMS",
    "arcsine_beta_logp_pt",
    "arcsine_to_unit",
    "basis_coords",
    "decomposition",
    "unit_to_arcsine",
    "var_dims",
]
