"""paddle's ``fleet.data_generator``: the generators that write a dataset's MultiSlot text."""
from pycoll.distributed.fleet.data_generator.generator import (DataGenerator, MultiSlotDataGenerator,
                                                               MultiSlotStringDataGenerator)

__all__ = ["DataGenerator", "MultiSlotDataGenerator", "MultiSlotStringDataGenerator"]
