"""paddle.io.dataloader.sampler: the index samplers."""
from pycoll.io.samplers import RandomSampler, Sampler, SequenceSampler, SubsetRandomSampler, WeightedRandomSampler

__all__ = ["RandomSampler", "Sampler", "SequenceSampler", "SubsetRandomSampler", "WeightedRandomSampler"]
