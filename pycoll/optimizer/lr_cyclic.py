"""The learning-rate schedules that rise and fall: OneCycleLR, CyclicLR and
CosineAnnealingWarmRestarts (paddle's formulas)."""
from __future__ import annotations

import math
from typing import Any, Callable, Dict, List, Optional, Union

from pycoll.optimizer._checks import integer, real
from pycoll.optimizer.lr_scheduler import LRScheduler


class OneCycleLR(LRScheduler):
    """max_learning_rate / divide_factor up to max_learning_rate over the first phase_pct of
    total_steps, then down to end_learning_rate (with ``three_phase``: back down to the start
    value over as many steps, then on to end_learning_rate), each phase cosine or linear."""

    def __init__(self, max_learning_rate: float, total_steps: int, divide_factor: float = 25.0,
                 end_learning_rate: float = 0.0001, phase_pct: float = 0.3, anneal_strategy: str = "cos",
                 three_phase: bool = False, last_epoch: int = -1, verbose: bool = False) -> None:
        max_lr = real(max_learning_rate, "max_learning_rate", low=0.0)
        min_lr = real(end_learning_rate, "end_learning_rate", low=0.0)
        self.total_steps = integer(total_steps, "total_steps", low=1)
        if not isinstance(phase_pct, float):  # paddle's rule: a float, even 0.5 not 1/2 as an int
            raise TypeError(f"phase_pct must be a float, got {type(phase_pct).__name__}")
        real(phase_pct, "phase_pct", low=0.0, high=1.0)
        initial_lr = max_learning_rate / float(real(divide_factor, "divide_factor"))
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}")
        self.anneal_func = self._cos_annealing if anneal_strategy == "cos" else self._linear_annealing
        total = self.total_steps
        # each phase: its last step, its length and its start and end values
        if three_phase:
            if phase_pct >= 0.5:
                raise ValueError(f"phase_pct must be < 0.5 when three_phase is True, got {phase_pct}")
            ends = [0, phase_pct * total - 1, 2 * phase_pct * total - 2, total - 1, total - 1]
            self._steps_size = [ends[1] - ends[0], ends[2] - ends[1], ends[3] - ends[2], ends[3] - ends[2]]
            self._lr_config = [initial_lr, max_lr, initial_lr, min_lr]
        else:
            ends = [0, phase_pct * total - 1, total - 1, total - 1]
            self._steps_size = [ends[1] - ends[0], ends[2] - ends[1], ends[2] - ends[1]]
            self._lr_config = [initial_lr, max_lr, min_lr]
        self._step_config: List[float] = ends
        super().__init__(initial_lr, last_epoch, verbose)

    @staticmethod
    def _cos_annealing(start_lr: float, end_lr: float, pct: float) -> float:
        return end_lr + (start_lr - end_lr) / 2.0 * (math.cos(math.pi * pct) + 1)

    @staticmethod
    def _linear_annealing(start_lr: float, end_lr: float, pct: float) -> float:
        return (end_lr - start_lr) * pct + start_lr

    def get_lr(self) -> float:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"OneCycleLR: tried to step {step} times, but total_steps is {self.total_steps}")
        last = len(self._lr_config) - 2
        for i, (end_step, size) in enumerate(zip(self._step_config[1:], self._steps_size)):
            if step <= end_step or i == last:
                return self.anneal_func(self._lr_config[i], self._lr_config[i + 1],
                                        (step - self._step_config[i]) / size)
        raise AssertionError("unreachable: the last phase takes every later step")


class CyclicLR(LRScheduler):
    """Cycles between base_learning_rate and max_learning_rate: up over step_size_up steps, down
    over step_size_down (default: the same). The swing is scaled by ``scale_fn`` of the cycle
    number or of the step (``scale_mode``); the modes 'triangular' (1), 'triangular2' (halved each
    cycle) and 'exp_range' (exp_gamma^step) name paddle's built-in ones."""

    def __init__(self, base_learning_rate: float, max_learning_rate: float, step_size_up: int,
                 step_size_down: Optional[int] = None, mode: str = "triangular", exp_gamma: float = 1.0,
                 scale_fn: Optional[Callable[[float], float]] = None, scale_mode: str = "cycle",
                 last_epoch: int = -1, verbose: bool = False) -> None:
        self.max_lr = real(max_learning_rate, "max_learning_rate", low=0.0)
        up = float(integer(step_size_up, "step_size_up", low=1))
        down = up if step_size_down is None else float(integer(step_size_down, "step_size_down", low=1))
        if not isinstance(exp_gamma, float):  # paddle's rule
            raise TypeError(f"exp_gamma must be a float, got {type(exp_gamma).__name__}")
        self.cycle_size = up + down
        self.step_up_pct = up / self.cycle_size
        self.amplitude = self.max_lr - real(base_learning_rate, "base_learning_rate", low=0.0)
        builtin = {"triangular": (self._triangular_scale_fn, "cycle"),
                   "triangular2": (self._triangular2_scale_fn, "cycle"),
                   "exp_range": (self._exp_range_scale_fn, "iterations")}
        if mode not in builtin and scale_fn is None:
            raise ValueError(f"mode must be 'triangular', 'triangular2' or 'exp_range' when scale_fn is not "
                             f"given, got {mode!r}")
        if scale_mode not in ("cycle", "iterations"):
            raise ValueError(f"scale_mode must be 'cycle' or 'iterations', got {scale_mode!r}")
        if scale_fn is not None and not callable(scale_fn):
            raise TypeError(f"scale_fn must be a function, got {type(scale_fn).__name__}")
        self.mode, self.gamma = mode, exp_gamma
        self.scale_fn, self.scale_mode = (scale_fn, scale_mode) if scale_fn is not None else builtin[mode]
        super().__init__(base_learning_rate, last_epoch, verbose)

    def _triangular_scale_fn(self, x: float) -> float:
        return 1.0

    def _triangular2_scale_fn(self, x: float) -> float:
        return 1 / (2.0 ** (x - 1))

    def _exp_range_scale_fn(self, x: float) -> float:
        return self.gamma ** x

    def get_lr(self) -> float:
        iterations = self.last_epoch
        cycle = 1 + iterations // self.cycle_size
        pct_per_cycle = 1.0 + iterations / self.cycle_size - cycle
        if pct_per_cycle <= self.step_up_pct:
            scale_factor = pct_per_cycle / self.step_up_pct
        else:
            scale_factor = (1 - pct_per_cycle) / (1 - self.step_up_pct)
        base_height = self.amplitude * scale_factor
        return self.base_lr + base_height * self.scale_fn(cycle if self.scale_mode == "cycle" else iterations)


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from learning_rate down to eta_min over a cycle of T_i steps, then a
    restart at learning_rate; the first cycle has T_0 steps and each next one T_mult times as many.

    ``step(epoch)`` may jump to any epoch (a float too: a point within a step), as paddle's. The
    state_dict is paddle's (last_epoch and last_lr); loading it puts the schedule back at
    last_epoch's place in its cycle, where paddle's own scheduler would restart the cycle from its
    beginning, forgetting where it was."""

    def __init__(self, learning_rate: float, T_0: int, T_mult: int = 1, eta_min: float = 0,
                 last_epoch: int = -1, verbose: bool = False) -> None:
        self.T_0 = self.T_i = integer(T_0, "T_0", low=1)
        self.T_mult = integer(T_mult, "T_mult", low=1)
        self.eta_min = real(eta_min, "eta_min")
        self.T_cur: Union[int, float] = last_epoch
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.eta_min + (self.base_lr - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2

    def step(self, epoch: Optional[float] = None) -> None:
        """Move to the next step, or to `epoch` (>= 0), and compute its learning rate."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur - self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if real(epoch, "epoch") < 0:
                raise ValueError(f"epoch must be >= 0, got {epoch}")
            if epoch < self.T_0:
                self.T_i, self.T_cur = self.T_0, epoch
            elif self.T_mult == 1:
                self.T_cur = epoch % self.T_0
            else:
                n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                self.T_i = self.T_0 * self.T_mult ** n
        self.last_epoch = math.floor(epoch)
        self.last_lr = self.get_lr()
        self._announce()

    def set_state_dict(self, state_dict: Dict[str, Any]) -> None:
        super().set_state_dict(state_dict)
        # where steps one by one leave T_cur and T_i at last_epoch, counted in whole cycles (exact,
        # where paddle's closed form for step(epoch) goes through a floating-point logarithm)
        self.T_i, self.T_cur = self.T_0, self.last_epoch
        if self.T_mult == 1:
            self.T_cur %= self.T_0
        while self.T_cur >= self.T_i:
            self.T_cur -= self.T_i
            self.T_i *= self.T_mult

    set_dict = set_state_dict
