import pycoll
from pycoll.distributed import fleet
class SimpleMPNet(pycoll.nn.Layer):
    def __init__(self, vocab_size, hidden_size, inner_size, output_size):
        super().__init__()
        self.linear1 = fleet.meta_parallel.ColumnParallelLinear(
            hidden_size,
            inner_size,
            gather_output=False,
            has_bias=True)
        self.linear2 = fleet.meta_parallel.RowParallelLinear(
            inner_size,
            hidden_size,
            input_is_parallel=True,
            has_bias=True)
        self.linear3 = pycoll.nn.Linear(hidden_size, output_size)
        self.embedding = fleet.meta_parallel.VocabParallelEmbedding(
                        vocab_size,
                        hidden_size)
    def forward(self, x):
        x = self.embedding(x)
        x = self.linear1(x)
        x = self.linear2(x)
        x = self.linear3(x)
        return x
