"""paddle.distribution: probability distributions with sampling (reparameterized where paddle has
``rsample``), log-densities, entropies and KL divergences made of differentiable pycoll ops, and
the bijective transforms of TransformedDistribution. Draws come from pycoll's generator
(``pycoll.seed`` makes them reproducible)."""
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
