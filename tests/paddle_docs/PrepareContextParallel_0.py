import pycoll
import pycoll.distributed as dist
class SDPALayer(pycoll.nn.Layer):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return pycoll.nn.functional.scaled_dot_product_attention(q, k, v)

class AttentionLayer(pycoll.nn.Layer):
    def __init__(self):
        super().__init__()
        self.hidden_size = 64
        self.num_key_value_heads = 10
        self.head_dim = 64
        self.sdpa = SDPALayer()
        self.q = pycoll.nn.Linear(
            self.hidden_size,
            self.hidden_size,
            bias_attr=False,
        )
        self.k = pycoll.nn.Linear(
            self.hidden_size,
            self.num_key_value_heads * self.head_dim,
            bias_attr=False,
        )
        self.v = pycoll.nn.Linear(
            self.hidden_size,
            self.num_key_value_heads * self.head_dim,
            bias_attr=False,
        )

    def forward(self, input):
        q = self.q(input)
        k = self.k(input)
        v = self.v(input)
        return self.sdpa(q, k, v)

class LlamaLayer(pycoll.nn.Layer):
    def __init__(self):
        super().__init__()
        self.attention = AttentionLayer()

    def forward(self, input, label):
        return self.attention(input)

class LlamaForCausalLayer(pycoll.nn.Layer):
    def __init__(self):
        super().__init__()
        self.llama = LlamaLayer()
        self.weight = self.create_parameter(shape=[64, 1024])
        self.loss_func = pycoll.nn.CrossEntropyLoss()

    def forward(self, input, label):
        out = self.llama(input, label)
        logits = pycoll.matmul(out, self.weight)
        loss = self.loss_func(logits, label)
        return logits

# doctest: +REQUIRES(env:DISTRIBUTED)
layer = LlamaForCausalLayer()
mp_config = {
    'llama': dist.PrepareContextParallel('p2p'),
    'sdpa': dist.ContextParallel('p2p'),
}
