"""paddle.distribution: probability distributions with sampling (reparameterized where paddle has
``rsample``), log-densities, entropies and KL divergences made of differentiable pycoll ops, and
the bijective transforms of TransformedDistribution. Draws come from pycoll's generator
(``pycoll.seed`` makes them reproducible).

paddle's docstrings import from its per-distribution modules (``from paddle.distribution.gumbel
import Gumbel``); the table at the end makes each such path a module holding the same objects."""
import sys
import types

from pycoll.distribution import transforms as transform
from pycoll.distribution.base import Distribution, ExponentialFamily
from pycoll.distribution.continuous import Cauchy, Exponential, Gumbel, Laplace, StudentT
from pycoll.distribution.continuous_bernoulli import ContinuousBernoulli
from pycoll.distribution.discrete import Bernoulli, Binomial, Categorical, Geometric, Multinomial, Poisson
from pycoll.distribution.gamma import Beta, Chi2, Dirichlet, Gamma
from pycoll.distribution.kl import kl_divergence, register_kl
from pycoll.distribution.lkj_cholesky import LKJCholesky
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
           "TransformedDistribution", "Uniform", "kl_divergence", "register_kl", "transform",
           "Transform", "AbsTransform", "AffineTransform", "ChainTransform", "ExpTransform", "IndependentTransform",
           "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform", "StackTransform",
           "StickBreakingTransform", "TanhTransform"]


_PADDLE_MODULES = {  # paddle 3.3.1's submodule -> what it defines that pycoll has (pycoll's own files aside)
    "bernoulli": [Bernoulli], "beta": [Beta], "binomial": [Binomial], "categorical": [Categorical],
    "cauchy": [Cauchy], "chi2": [Chi2], "dirichlet": [Dirichlet], "distribution": [Distribution],
    "exponential": [Exponential], "exponential_family": [ExponentialFamily], "geometric": [Geometric],
    "gumbel": [Gumbel], "independent": [Independent], "laplace": [Laplace], "lognormal": [LogNormal],
    "multinomial": [Multinomial], "multivariate_normal": [MultivariateNormal], "poisson": [Poisson],
    "student_t": [StudentT], "transformed_distribution": [TransformedDistribution], "uniform": [Uniform],
}


def _register_paddle_modules() -> None:
    for name, objects in _PADDLE_MODULES.items():
        module = types.ModuleType(f"{__name__}.{name}", f"paddle.distribution.{name}: pycoll's objects at its path.")
        module.__all__ = [obj.__name__ for obj in objects]
        for obj in objects:
            setattr(module, obj.__name__, obj)
        sys.modules[module.__name__] = module
        globals()[name] = module
    sys.modules[f"{__name__}.transform"] = transform  # paddle's name for pycoll.distribution.transforms


_register_paddle_modules()
