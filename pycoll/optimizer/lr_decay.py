"""The learning-rate schedules that are a function of the step (paddle.optimizer.lr's decays and
LinearWarmup). Each ``get_lr`` is paddle's formula, operation for operation, so the values match
paddle's to the last bit."""
from __future__ import annotations

import math
from typing import Callable, Sequence, Union

from pycoll.optimizer._checks import integer, real
from pycoll.optimizer.lr_scheduler import LRScheduler


def _callable(fn: Callable[[int], float], name: str, owner: str) -> Callable[[int], float]:
    if not callable(fn):
        raise TypeError(f"{owner}: {name} must be a function of the step, got {type(fn).__name__}")
    return fn


def _below_one(gamma: float, name: str = "gamma") -> float:
    """paddle's 'gamma should be < 1.0' (the rate a value is multiplied by at each decay)."""
    return real(gamma, name, high=1.0, high_open=True)


class NoamDecay(LRScheduler):
    """lr = learning_rate * d_model^-0.5 * min(step^-0.5, warmup_steps^-1.5 * step) (step 0: 0)."""

    def __init__(self, d_model: int, warmup_steps: int, learning_rate: float = 1.0,
                 last_epoch: int = -1, verbose: bool = False) -> None:
        real(d_model, "d_model", low=0.0, low_open=True)
        real(warmup_steps, "warmup_steps", low=0.0, low_open=True)
        self.d_model, self.warmup_steps = d_model, warmup_steps
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        a = 1 if self.last_epoch == 0 else self.last_epoch ** -0.5
        b = self.warmup_steps ** -1.5 * self.last_epoch
        return self.base_lr * (self.d_model ** -0.5) * min(a, b)


class PiecewiseDecay(LRScheduler):
    """values[i] while step < boundaries[i]; values[-1] after the last boundary."""

    def __init__(self, boundaries: Sequence[int], values: Sequence[float], last_epoch: int = -1,
                 verbose: bool = False) -> None:
        if len(boundaries) == 0:
            raise ValueError("PiecewiseDecay: boundaries cannot be empty")
        if len(values) <= len(boundaries):
            raise ValueError(f"PiecewiseDecay: values must have one more element than boundaries, got "
                             f"len(values) {len(values)} and len(boundaries) {len(boundaries)}")
        self.boundaries, self.values = boundaries, values
        super().__init__(last_epoch=last_epoch, verbose=verbose)

    def get_lr(self) -> float:
        for boundary, value in zip(self.boundaries, self.values):
            if self.last_epoch < boundary:
                return value
        return self.values[len(self.values) - 1]


class NaturalExpDecay(LRScheduler):
    """lr = learning_rate * e^(-gamma * step)."""

    def __init__(self, learning_rate: float, gamma: float, last_epoch: int = -1, verbose: bool = False) -> None:
        self.gamma = real(gamma, "gamma", low=0.0, low_open=True)
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.base_lr * math.exp(-1 * self.gamma * self.last_epoch)


class InverseTimeDecay(LRScheduler):
    """lr = learning_rate / (1 + gamma * step)."""

    def __init__(self, learning_rate: float, gamma: float, last_epoch: int = -1, verbose: bool = False) -> None:
        self.gamma = real(gamma, "gamma")
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.base_lr / (1 + self.gamma * self.last_epoch)


class PolynomialDecay(LRScheduler):
    """lr = (learning_rate - end_lr) * (1 - step/decay_steps)^power + end_lr, the step held at
    decay_steps; with ``cycle`` decay_steps grows to the next multiple of itself past the step."""

    def __init__(self, learning_rate: float, decay_steps: int, end_lr: float = 0.0001, power: float = 1.0,
                 cycle: bool = False, last_epoch: int = -1, verbose: bool = False) -> None:
        self.decay_steps = integer(decay_steps, "decay_steps", low=1)
        self.end_lr = real(end_lr, "end_lr")
        self.power = real(power, "power", low=0.0, low_open=True)
        self.cycle = bool(cycle)
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        epoch, decay_steps = self.last_epoch, self.decay_steps
        if self.cycle:
            cycles = 1 if self.last_epoch == 0 else math.ceil(float(self.last_epoch) / float(self.decay_steps))
            decay_steps = self.decay_steps * cycles
        else:
            epoch = min(self.last_epoch, self.decay_steps)
        return (self.base_lr - self.end_lr) * ((1 - float(epoch) / float(decay_steps)) ** self.power) + self.end_lr


class LinearWarmup(LRScheduler):
    """start_lr rising linearly to end_lr over warmup_steps steps, then ``learning_rate``: a float,
    or a scheduler stepped to (step - warmup_steps) whose state is saved with this one's."""

    def __init__(self, learning_rate: Union[float, LRScheduler], warmup_steps: int, start_lr: float,
                 end_lr: float, last_epoch: int = -1, verbose: bool = False) -> None:
        if not isinstance(learning_rate, LRScheduler):
            real(learning_rate, "learning_rate")
        self.learning_rate = learning_rate
        self.warmup_steps = integer(warmup_steps, "warmup_steps", low=1)
        if not real(end_lr, "end_lr") > real(start_lr, "start_lr"):
            raise ValueError(f"LinearWarmup: end_lr {end_lr} must be greater than start_lr {start_lr}")
        self.start_lr, self.end_lr = start_lr, end_lr
        super().__init__(start_lr, last_epoch, verbose)

    def state_dict(self) -> dict:
        state = super().state_dict()
        if isinstance(self.learning_rate, LRScheduler):
            state["LinearWarmup_LR"] = self.learning_rate.state_dict()
        return state

    def set_state_dict(self, state_dict: dict) -> None:
        if not isinstance(self.learning_rate, LRScheduler):
            super().set_state_dict(state_dict)
            return
        if not isinstance(state_dict, dict) or "LinearWarmup_LR" not in state_dict:
            raise ValueError("LinearWarmup.set_state_dict: state_dict must hold 'LinearWarmup_LR', the "
                             "wrapped scheduler's state")
        super().set_state_dict({k: v for k, v in state_dict.items() if k != "LinearWarmup_LR"})
        self.learning_rate.set_state_dict(state_dict["LinearWarmup_LR"])

    set_dict = set_state_dict

    def get_lr(self) -> float:
        if self.last_epoch < self.warmup_steps:
            return (self.end_lr - self.start_lr) * float(self.last_epoch) / float(self.warmup_steps) + self.start_lr
        if isinstance(self.learning_rate, LRScheduler):
            self.learning_rate.step(self.last_epoch - self.warmup_steps)
            return self.learning_rate()
        return self.learning_rate


class LinearLR(LRScheduler):
    """learning_rate * start_factor rising (or falling) linearly to learning_rate * end_factor over
    total_steps steps, then staying there. Each step multiplies the previous value, as paddle's
    does (so a non-default last_epoch starts from learning_rate, as in paddle)."""

    def __init__(self, learning_rate: float, total_steps: int, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, last_epoch: int = -1, verbose: bool = False) -> None:
        self.start_factor = real(start_factor, "start_factor", low=0.0, high=1.0, low_open=True)
        self.end_factor = real(end_factor, "end_factor", low=0.0, high=1.0)
        self.total_steps = integer(total_steps, "total_steps", low=1)
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        if self.last_epoch == 0:
            return self.base_lr * self.start_factor
        if self.last_epoch > self.total_steps:
            return self.last_lr
        base = self.total_steps * self.start_factor
        change = self.end_factor - self.start_factor
        return self.last_lr * (1.0 + change / (base + (self.last_epoch - 1) * change))


class ExponentialDecay(LRScheduler):
    """lr = learning_rate * gamma^step."""

    def __init__(self, learning_rate: float, gamma: float, last_epoch: int = -1, verbose: bool = False) -> None:
        self.gamma = real(gamma, "gamma", low=0.0, high=1.0, low_open=True, high_open=True)
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.base_lr * (self.gamma ** self.last_epoch)


class MultiStepDecay(LRScheduler):
    """lr = learning_rate * gamma^(the number of milestones <= step)."""

    def __init__(self, learning_rate: float, milestones: Sequence[int], gamma: float = 0.1,
                 last_epoch: int = -1, verbose: bool = False) -> None:
        if not isinstance(milestones, (tuple, list)):
            raise TypeError(f"MultiStepDecay: milestones must be a tuple or a list, got {type(milestones).__name__}")
        if not all(a < b for a, b in zip(milestones, milestones[1:])):
            raise ValueError(f"MultiStepDecay: milestones must increase, got {list(milestones)}")
        self.milestones = milestones
        self.gamma = _below_one(gamma)
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        for i, milestone in enumerate(self.milestones):
            if self.last_epoch < milestone:
                return self.base_lr * (self.gamma ** i)
        return self.base_lr * (self.gamma ** len(self.milestones))


class StepDecay(LRScheduler):
    """lr = learning_rate * gamma^(step // step_size)."""

    def __init__(self, learning_rate: float, step_size: int, gamma: float = 0.1, last_epoch: int = -1,
                 verbose: bool = False) -> None:
        self.step_size = integer(step_size, "step_size", low=1)
        self.gamma = _below_one(gamma)
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.base_lr * (self.gamma ** (self.last_epoch // self.step_size))


class LambdaDecay(LRScheduler):
    """lr = learning_rate * lr_lambda(step)."""

    def __init__(self, learning_rate: float, lr_lambda: Callable[[int], float], last_epoch: int = -1,
                 verbose: bool = False) -> None:
        self.lr_lambda = _callable(lr_lambda, "lr_lambda", "LambdaDecay")
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.base_lr * self.lr_lambda(self.last_epoch)


class MultiplicativeDecay(LRScheduler):
    """lr = learning_rate * lr_lambda(1) * lr_lambda(2) * ... * lr_lambda(step)."""

    def __init__(self, learning_rate: float, lr_lambda: Callable[[int], float], last_epoch: int = -1,
                 verbose: bool = False) -> None:
        self.lr_lambda = _callable(lr_lambda, "lr_lambda", "MultiplicativeDecay")
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        lr = self.base_lr
        for epoch in range(1, self.last_epoch + 1):
            lr = lr * self.lr_lambda(epoch)
        return lr


class CosineAnnealingDecay(LRScheduler):
    """Cosine annealing from learning_rate down to eta_min over T_max steps (and back up, and so
    on), computed, as paddle does, from the previous value at each step; ``step(epoch)`` uses
    the closed form eta_min + (learning_rate - eta_min) * (1 + cos(pi * epoch / T_max)) / 2."""

    def __init__(self, learning_rate: float, T_max: int, eta_min: float = 0, last_epoch: int = -1,
                 verbose: bool = False) -> None:
        self.T_max = integer(T_max, "T_max", low=1)
        self.eta_min = real(eta_min, "eta_min")
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        if self.last_epoch == 0:
            return self.base_lr
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            return self.last_lr + (self.base_lr - self.eta_min) * (1 - math.cos(math.pi / self.T_max)) / 2
        return ((1 + math.cos(math.pi * self.last_epoch / self.T_max))
                / (1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max))
                * (self.last_lr - self.eta_min) + self.eta_min)

    def _get_closed_form_lr(self) -> float:
        return self.eta_min + (self.base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
