"""Communication engines. A backend moves raw arrays in place and returns engine requests;
it knows nothing of Tensors, the public group API or autograd."""
