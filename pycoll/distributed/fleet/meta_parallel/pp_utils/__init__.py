"""paddle's ``fleet.meta_parallel.pp_utils`` path. pycoll's pipeline has its own stage messages
(``meta_parallel.stage_p2p``); of paddle's helpers here only ``utils``' conversions between a
stage's dict of tensors and the keyed tuple paddle sends exist."""
