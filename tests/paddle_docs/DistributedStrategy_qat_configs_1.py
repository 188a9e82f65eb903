import pycoll.distributed.fleet as fleet
strategy = fleet.DistributedStrategy()
strategy.qat = True
strategy.qat_configs = {
    "channel_wise_abs_max": True,
    "weight_bits": 8,
    "activation_bits": 8,
    "not_quant_pattern": ['skip_quant']
}
