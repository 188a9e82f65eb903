"""paddle.distribution: probability distributions with sampling (reparameterized where paddle has
``rsample``), log-densities, entropies and KL divergences made of differentiable pycoll ops, and
the bijective transforms of TransformedDistribution. Draws come from pycoll's generator
(``pycoll.seed`` makes them reproducible).

paddle's docstrings import from its per-distribution modules (``from paddle.distribution.gumbel
import Gumbel``); the table at the end makes each such path a module holding the same objects (or,
where pycoll has a module of paddle's name, as ``lkj_cholesky``, adds paddle's names to it).
``constraint``, ``variable`` and ``transform`` are real modules."""
import sys
import types

from pycoll.distribution import constraint, transform, variable
from pycoll.distribution.base import Distribution, ExponentialFamily
from pycoll.distribution.continuous import Cauchy, Exponential, Gumbel, Laplace, StudentT
from pycoll.distribution.continuous_bernoulli import ContinuousBernoulli
from pycoll.distribution.discrete import Bernoulli, Binomial, Categorical, Geometric, Multinomial, Poisson
from pycoll.distribution.gamma import Beta, Chi2, Dirichlet, Gamma
from pycoll.distribution.kl import kl_divergence, register_kl
from pycoll.distribution.lkj_cholesky import LKJCholesky
from pycoll.distribution.matrix_helpers import (batch_mahalanobis, matrix_to_tril, mvlgamma, precision_to_scale_tril,
                                                tril_indices, tril_matrix_to_vec, vec_to_tril_matrix)
from pycoll.distribution.multivariate import Independent, MultivariateNormal
from pycoll.distribution.normal import Normal, Uniform
from pycoll.distribution.transformed import LogNormal, TransformedDistribution
from pycoll.distribution.transforms import (AbsTransform, AffineTransform, ChainTransform, ExpTransform,
                                            IndependentTransform, PowerTransform, ReshapeTransform, SigmoidTransform,
                                            SoftmaxTransform, StackTransform, StickBreakingTransform, TanhTransform,
                                            Transform)

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet",
           "Distribution", "Exponential", "ExponentialFamily", "Gamma", "Geometric", "Gumbel", "Independent",
           "Laplace", "LKJCholesky", "LogNormal", "Multinomial", "MultivariateNormal", "Normal", "Poisson", "StudentT",
           "TransformedDistribution", "Uniform", "kl_divergence", "register_kl", "transform", "constraint", "variable",
           "Transform", "AbsTransform", "AffineTransform", "ChainTransform", "ExpTransform", "IndependentTransform",
           "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform", "StackTransform",
           "StickBreakingTransform", "TanhTransform"]


_PADDLE_MODULES = {  # paddle 3.3.1's submodule -> what it defines that pycoll has (pycoll's own files aside)
    "bernoulli": [Bernoulli], "beta": [Beta], "binomial": [Binomial], "categorical": [Categorical],
    "cauchy": [Cauchy], "chi2": [Chi2], "dirichlet": [Dirichlet], "distribution": [Distribution],
    "exponential": [Exponential], "exponential_family": [ExponentialFamily], "geometric": [Geometric],
    "gumbel": [Gumbel], "independent": [Independent], "laplace": [Laplace], "lognormal": [LogNormal],
    "lkj_cholesky": [LKJCholesky, mvlgamma, tril_indices, matrix_to_tril, vec_to_tril_matrix, tril_matrix_to_vec],
    "multinomial": [Multinomial], "multivariate_normal": [MultivariateNormal, precision_to_scale_tril, batch_mahalanobis],
    "poisson": [Poisson],
    "student_t": [StudentT], "transformed_distribution": [TransformedDistribution], "uniform": [Uniform],
}


def _register_paddle_modules() -> None:
    for name, objects in _PADDLE_MODULES.items():
        module = sys.modules.get(f"{__name__}.{name}")
        if module is None:
            module = types.ModuleType(f"{__name__}.{name}", f"paddle.distribution.{name}: pycoll's objects at its path.")
            module.__all__ = []
            sys.modules[module.__name__] = module
            globals()[name] = module
        module.__all__ = list(dict.fromkeys([*getattr(module, "__all__", []), *(obj.__name__ for obj in objects)]))
        for obj in objects:
            setattr(module, obj.__name__, obj)


_register_paddle_modules()
