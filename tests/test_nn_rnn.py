"""nn.SimpleRNN / LSTM / GRU, nn.RNN / BiRNN and the cells against paddle 3.3.1.

PADDLE holds checksums (sum of x * det(x.shape, 7)) of what paddle 3.3.1 (CPU, float64) computed
for the same parameters and inputs (all made by `det`): the outputs, the final states, then the
gradients of the inputs, the initial states and every parameter (of the loss sum_j out_j *
det(out_j.shape, 4 + j)). Side by side, the whole arrays agreed to 1.5e-14 over these cases and the
rest of the grid (every layer type, both directions, 2 layers, with and without sequence_length,
time_major both ways).

One exception, a paddle bug: paddle's fused CPU rnn kernel (what SimpleRNN/LSTM/GRU run there)
gets the gradients wrong for a bidirectional network given both sequence_length and non-zero
initial states (it takes zero for the backward direction's previous hidden state at each
sequence's last step; values are right). For those cases (simple_bi_seq, relu_bi_seq,
lstm_bi_seq, gru_bi_seq) the numbers are paddle's own step-by-step path (its nn.RNN/BiRNN layers
over the same cells, outputs past the lengths zeroed as the kernel does), which agrees with the
kernel everywhere else to 1e-15 and with central differences (test below).
"""
import numpy as np
import pytest

import pycoll
import pycoll.nn as nn

B, T, I, H = 3, 5, 4, 3
LENS = [5, 2, 3]

PADDLE = {  # name: checksums of the outputs, the final states, then the gradients of the inputs,
    # the initial states and every parameter (named_parameters order)
    'simple_fw': [1.010729883936, 2.330912935104, -0.562483636765, -2.756012599727, -2.483827247764, 1.723017527219, -0.117585196628, -0.117585196628, 5.931649845551, 0.33412053183, -0.034115920272, -0.034115920272],
    'simple_fw_seq_tm': [-0.379939102397, 1.493807804435, 0.650320785763, -1.122257471731, -1.936272455353, 0.840391711231, 0.478794217977, 0.478794217977, -3.195161889458, -0.142110083744, -0.067688813845, -0.067688813845],
    'simple_bi_tm': [-0.656530530541, 1.83959584822, -0.901891347327, -0.612323186334, -2.230144862835, 1.359057754941, -0.143656128301, -0.143656128301, 0.496553720145, 1.565005334867, 0.170438535737, 0.170438535737, 0.39478314325, 0.286874314904, 0.411293310285, 0.411293310285, -0.40138883755, 0.663706794664, -0.322451466746, -0.322451466746],
    'simple_bi_seq': [-4.349209966335, 0.72831099587, 0.506780033941, -1.156506714368, -1.762041500597, 0.973392356096, -0.212294209137, -0.212294209137, -0.246765815562, 0.453917825491, 0.05862767998, 0.05862767998, 0.004384049148, -2.415158683327, 0.179921791741, 0.179921791741, -0.205948110828, 0.055682717329, -0.147938507216, -0.147938507216],
    'relu_bi_seq': [-17.953720054872, 2.090544169633, 2.263839545123, -3.763386248274, -7.97246791676, -0.170136430695, 0.251771231311, 0.251771231311, -3.276641191019, 9.10824358934, -0.687196128805, -0.687196128805, 7.61298493896, -87.076477951057, -2.1903091135, -2.1903091135, -5.124263765777, 22.520044304936, 0.98145369785, 0.98145369785],
    'lstm_fw': [1.883158518274, -1.241867346601, -2.664381562023, 0.506586357862, -0.951458540906, -0.469329874698, 1.725960400923, -0.197554071363, -0.724623122417, -0.724623122417, 0.097117125212, 1.523239825545, 0.800450501487, 0.800450501487],
    'lstm_fw_seq_tm': [0.115078722504, -0.154660410801, -1.049542605647, -0.637000993317, -0.353708205179, -0.047337976473, 1.727396666807, 0.247981170636, -0.33960172477, -0.33960172477, -0.380635685104, -0.604741551439, 0.374514917269, 0.374514917269],
    'lstm_bi_tm': [0.078096814083, 1.69321413969, 5.290150452642, 0.419424557615, 0.016780750132, -0.762981754483, 1.88759779548, 0.248360470134, -1.107746185802, -1.107746185802, 0.741449776948, -0.039085687225, 0.663467792922, 0.663467792922, 0.633356215516, 1.385073822191, -0.290829815014, -0.290829815014, -1.289862104717, -0.529062103349, -1.75975593492, -1.75975593492],
    'lstm_bi_seq': [0.323032801015, 1.40492786032, 4.17808356525, -0.273533906867, 1.025081457288, 0.860300947371, 0.608152219493, 0.394694765667, -0.783604548866, -0.783604548866, 0.192935204446, 0.082875349546, 0.571966588794, 0.571966588794, 0.435749530518, 1.516049399683, -0.351176337005, -0.351176337005, -0.828508111553, -0.326310473159, -0.064216413363, -0.064216413363],
    'lstm_proj_fw': [-0.196464980904, -0.171312811054, 1.080412070501, -0.133570469066, 0.214085455064, -0.10525354616, 0.713108537142, -0.039924805513, -0.582606893377, -0.582606893377, 0.507484072018, -0.148194441094, 0.038725907242, 0.063497536675, 0.063497536675, -0.23068592648],
    'lstm_proj_bi_seq_tm': [-1.065285362481, -0.428450323093, 2.558371492411, -0.40667360682, -0.877210468132, 0.88776815662, 0.752228061869, 0.221702435158, -0.128039049911, -0.128039049911, 0.532553126666, -0.350697669122, -0.076480660389, 0.463738865342, 0.463738865342, -0.175934477061, -0.195628138505, 0.052374459167, 0.412463890194, 0.412463890194, 0.078569619106, -0.30278626451, -0.737014799631, -1.700967803026, -1.700967803026, -1.405154172023],
    'gru_fw': [4.206246346567, -3.098561118882, 0.498007480777, -3.463331973362, -0.502937421276, -0.129899644993, -3.319217356286, -1.200081464285, 0.144224140167, 2.127237739431, 1.946024610346, 2.081636373137],
    'gru_fw_seq_tm': [-0.127367254116, -1.562762675215, 0.351132538495, 0.983420275324, 0.554797871674, 1.054690005897, -1.60349984808, -0.876940960996, -0.949319454404, -0.532261512505, 1.42975337121, 0.951557498091],
    'gru_bi_tm': [2.461930647591, 2.971771652391, -1.590440716385, -6.194123475296, 0.393026307737, 0.173685819731, -1.34693766165, -0.517957264448, 2.471880465379, -0.589584830101, 3.310541696754, 1.908356771615, -0.066109125359, 1.03985090567, -0.942526301493, -0.457050842103, 0.105035625608, 2.415765871863, 3.429244332842, 2.158839165693],
    'gru_bi_seq': [0.421113821701, 2.843391936993, -1.169216939891, -1.654900374692, -1.968574218855, 0.072232305983, -0.926122871742, -0.419850695023, 3.317752778965, 1.048073819087, 3.991751428835, 2.725578367236, 0.103095173166, 0.366099545781, -2.174031034463, -1.483124223875, 1.36646992741, 0.512158919544, 2.342286160893, 1.417009360827],
    'gru_bi_seq_zero_states': [1.808613122893, 0.770911262682, -0.401176063704, -1.744128834777, 0.379152113806, -0.993717949641, -0.468740277731, 3.104367631253, 0.595233848374, 3.665219993917, 2.359411090679, 0.281948724161, 0.292685567919, -2.327101750627, -1.644808101125, 0.916767660542, 0.025429835816, 1.818698415146, 0.996560952547],
    'simple_cell': [2.829135143922, 2.829135143922, 0.597311209545, 2.347416720329, 0.329767717841, 2.57036578824, -0.768946838948, -0.768946838948],
    'simple_cell_relu_zero': [0.069342362196, 0.069342362196, 0.089743295392, 0.614436004103, 0.0, -0.579166004312, -0.579166004312],
    'lstm_cell': [-0.432319095552, -0.432319095552, -0.424678572267, 0.900813624176, 0.233753689206, -0.802791406734, 0.532339072759, 0.651591366775, -0.370676472681, -0.370676472681],
    'lstm_cell_zero': [-0.205871243905, -0.205871243905, -0.317321313034, 0.65557420705, 0.667306841148, 0.0, -0.93172417708, -0.93172417708],
    'lstm_cell_proj': [0.434367068989, 0.434367068989, 0.457426950465, 0.555860195202, -0.363255586955, 0.046556352713, 0.388233090186, -0.041224092767, -0.425309656881, -0.425309656881, 1.005487550607],
    'gru_cell': [-0.490472917681, -0.490472917681, 2.487829856701, 0.63981995854, -1.466275414421, 2.36748729676, -2.2885022794, -0.474536284789],
    'gru_cell_zero': [-0.564906129109, -0.564906129109, 1.875250816082, -1.231274956382, 0.0, -2.755493703862, -0.749538729993],
    'rnn_gru_reverse_seq_tm': [-0.104821234706, -0.431600576952, 1.183151829881, -0.667499993124, -1.683585792943, 2.082732264939, -2.630008335781, -0.608741740689],
    'rnn_simple_zero_states': [2.078970692826, 2.159491334304, 0.758460390317, -6.34336078112, 5.736154305321, 0.479724060085, 0.479724060085],
    'birnn_lstm_seq': [1.13490915196, 0.413427572018, 0.570982494478, 0.691930946226, 2.058526552507, -2.14766559121, -0.496131400965, 0.169980077712, 0.015893348447, 0.231723759342, 1.503424593462, 0.259590932062, -0.191505917649, -0.191505917649, 1.284494041731, 0.047278884646, 1.356820091255, 1.356820091255],
}

LAYERS = [  # name, class, direction, sequence_length given, time_major, proj_size, initial states given
    ("simple_fw", "SimpleRNN", "forward", False, False, 0, True),
    ("simple_fw_seq_tm", "SimpleRNN", "forward", True, True, 0, True),
    ("simple_bi_tm", "SimpleRNN", "bidirect", False, True, 0, True),
    ("simple_bi_seq", "SimpleRNN", "bidirect", True, False, 0, True),
    ("relu_bi_seq", "SimpleRNN_relu", "bidirectional", True, False, 0, True),
    ("lstm_fw", "LSTM", "forward", False, False, 0, True),
    ("lstm_fw_seq_tm", "LSTM", "forward", True, True, 0, True),
    ("lstm_bi_tm", "LSTM", "bidirect", False, True, 0, True),
    ("lstm_bi_seq", "LSTM", "bidirect", True, False, 0, True),
    ("lstm_proj_fw", "LSTM", "forward", False, False, 2, True),
    ("lstm_proj_bi_seq_tm", "LSTM", "bidirectional", True, True, 2, True),
    ("gru_fw", "GRU", "forward", False, False, 0, True),
    ("gru_fw_seq_tm", "GRU", "forward", True, True, 0, True),
    ("gru_bi_tm", "GRU", "bidirect", False, True, 0, True),
    ("gru_bi_seq", "GRU", "bidirect", True, False, 0, True),
    ("gru_bi_seq_zero_states", "GRU", "bidirect", True, False, 0, False),
]


@pytest.fixture(autouse=True)
def float64():
    before = pycoll.get_default_dtype()
    pycoll.set_default_dtype("float64")
    yield
    pycoll.set_default_dtype(before)


def det(shape, seed, scale=1.0):
    """Deterministic values in [-scale, scale] (the same on any NumPy, unlike a generator)."""
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 0.37 + seed * 1.3) * scale).reshape(shape)


def checksum(a):
    a = np.asarray(a)
    return float((a * det(a.shape, 7)).sum())


def leaf(shape, seed, scale=1.0):
    return pycoll.to_tensor(det(shape, seed, scale), stop_gradient=False)


def fill_parameters(layer):
    for k, (_, p) in enumerate(layer.named_parameters()):
        p.set_value(det(p.shape, 10 + k, 0.6))


def checksums(layer, outs, leaves_in):
    """Back-propagate sum_j out_j * det(out_j.shape, 4 + j); the checksums as PADDLE holds them."""
    loss = sum((t * pycoll.to_tensor(det(t.shape, 4 + j))).sum() for j, t in enumerate(outs))
    loss.backward()
    grads = [t.grad for t in leaves_in] + [p.grad for _, p in layer.named_parameters()]
    return [checksum(t.numpy()) for t in outs] + [checksum(g.numpy()) for g in grads]


def build(kind, direction, time_major, proj_size):
    kw = dict(num_layers=2, direction=direction, time_major=time_major)
    if kind == "SimpleRNN_relu":
        return nn.SimpleRNN(I, H, activation="relu", **kw)
    if kind == "LSTM":
        return nn.LSTM(I, H, proj_size=proj_size, **kw)
    return getattr(nn, kind)(I, H, **kw)


@pytest.mark.parametrize("name, kind, direction, seq, time_major, proj_size, given", LAYERS,
                         ids=[c[0] for c in LAYERS])
def test_layers_values_and_gradients_are_paddles(name, kind, direction, seq, time_major, proj_size, given):
    m = build(kind, direction, time_major, proj_size)
    fill_parameters(m)
    d = 1 if direction == "forward" else 2
    x = leaf([T, B, I] if time_major else [B, T, I], 1)
    leaves_in, states = [x], None
    if given:
        h0 = leaf([2 * d, B, proj_size or H], 2, 0.5)
        states = h0
        leaves_in.append(h0)
        if kind == "LSTM":
            c0 = leaf([2 * d, B, H], 3, 0.5)
            states = (h0, c0)
            leaves_in.append(c0)
    out, final = m(x, states, pycoll.to_tensor(LENS, dtype="int64") if seq else None)
    finals = list(final) if kind == "LSTM" else [final]
    assert out.shape == ([T, B] if time_major else [B, T]) + [d * (proj_size or H)]
    assert [f.shape for f in finals] == [[2 * d, B, proj_size or H], [2 * d, B, H]][:len(finals)]
    assert checksums(m, [out] + finals, leaves_in) == pytest.approx(PADDLE[name], rel=1e-10, abs=1e-10)


@pytest.mark.parametrize("name, cls, kwargs, given", [
    ("simple_cell", "SimpleRNNCell", {}, True), ("simple_cell_relu_zero", "SimpleRNNCell", {"activation": "relu"}, False),
    ("lstm_cell", "LSTMCell", {}, True), ("lstm_cell_zero", "LSTMCell", {}, False),
    ("lstm_cell_proj", "LSTMCell", {"proj_size": 2}, True), ("gru_cell", "GRUCell", {}, True),
    ("gru_cell_zero", "GRUCell", {}, False)])
def test_cells_values_and_gradients_are_paddles(name, cls, kwargs, given):
    cell = getattr(nn, cls)(I, H, **kwargs)
    fill_parameters(cell)
    x = leaf([B, I], 1)
    leaves_in, states = [x], None
    if given:
        sizes = [kwargs.get("proj_size") or H, H] if cls == "LSTMCell" else [H]
        parts = [leaf([B, s], 2 + j, 0.5) for j, s in enumerate(sizes)]
        leaves_in += parts
        states = tuple(parts) if cls == "LSTMCell" else parts[0]
    out, new = cell(x, states)
    outs = [out] + (list(new) if cls == "LSTMCell" else [new])
    assert checksums(cell, outs, leaves_in) == pytest.approx(PADDLE[name], rel=1e-10, abs=1e-10)


def test_rnn_and_birnn_wrappers_are_paddles():
    """nn.RNN / BiRNN run the cells step by step: past a length the outputs are what the cell
    computed (not zeroed), the states stay."""
    gru = nn.RNN(nn.GRUCell(I, H), is_reverse=True, time_major=True)
    fill_parameters(gru)
    x, h0 = leaf([T, B, I], 1), leaf([B, H], 2, 0.5)
    out, h = gru(x, h0, pycoll.to_tensor(LENS, dtype="int64"))
    assert checksums(gru, [out, h], [x, h0]) == pytest.approx(PADDLE["rnn_gru_reverse_seq_tm"], rel=1e-10, abs=1e-10)

    simple = nn.RNN(nn.SimpleRNNCell(I, H))
    fill_parameters(simple)
    x = leaf([B, T, I], 1)
    out, h = simple(x)
    assert checksums(simple, [out, h], [x]) == pytest.approx(PADDLE["rnn_simple_zero_states"], rel=1e-10, abs=1e-10)

    bi = nn.BiRNN(nn.LSTMCell(I, H), nn.LSTMCell(I, H))
    fill_parameters(bi)
    x = leaf([B, T, I], 1)
    parts = [leaf([B, H], 2 + j, 0.5) for j in range(4)]
    out, ((hf, cf), (hb, cb)) = bi(x, ((parts[0], parts[1]), (parts[2], parts[3])), pycoll.to_tensor(LENS))
    assert out.shape == [B, T, 2 * H]
    assert checksums(bi, [out, hf, cf, hb, cb], [x] + parts) == pytest.approx(PADDLE["birnn_lstm_seq"], rel=1e-10,
                                                                               abs=1e-10)


def test_sequence_length_equals_running_each_sequence_alone():
    """Outputs past a length are zero; the rest and the final states are those of the sequence
    cut to its length and run alone (both directions, both layers)."""
    m = nn.LSTM(I, H, num_layers=2, direction="bidirect")
    x = pycoll.to_tensor(det([B, T, I], 1))
    h0, c0 = pycoll.to_tensor(det([4, B, H], 2, 0.5)), pycoll.to_tensor(det([4, B, H], 3, 0.5))
    out, (h, c) = m(x, (h0, c0), pycoll.to_tensor(LENS))
    for b, n in enumerate(LENS):
        one_out, (one_h, one_c) = m(x[b:b + 1, :n], (h0[:, b:b + 1], c0[:, b:b + 1]))
        np.testing.assert_allclose(out.numpy()[b, :n], one_out.numpy()[0], rtol=0, atol=1e-14)
        assert not out.numpy()[b, n:].any()
        np.testing.assert_allclose(h.numpy()[:, b], one_h.numpy()[:, 0], rtol=0, atol=1e-14)
        np.testing.assert_allclose(c.numpy()[:, b], one_c.numpy()[:, 0], rtol=0, atol=1e-14)


def test_bidirectional_sequence_length_gradient_equals_central_differences():
    """Where paddle's fused kernel is wrong (see the module docstring): the backward direction's
    weight_hh gradient with sequence_length and initial states."""
    m = nn.SimpleRNN(I, H, num_layers=2, direction="bidirect")
    fill_parameters(m)
    x, h0 = pycoll.to_tensor(det([B, T, I], 1)), pycoll.to_tensor(det([4, B, H], 2, 0.5))
    lengths = pycoll.to_tensor(LENS)
    weight = pycoll.to_tensor(det([B, T, 2 * H], 4))

    def loss():
        out, _ = m(x, h0, lengths)
        return (out * weight).sum()
    loss().backward()
    p = m.weight_hh_l0_reverse
    base, numeric, eps = p.numpy().copy(), np.zeros(p.shape), 1e-6
    for idx in np.ndindex(*p.shape):
        for sign in (1, -1):
            moved = base.copy()
            moved[idx] += sign * eps
            p.set_value(moved)
            numeric[idx] += sign * float(loss()) / (2 * eps)
    np.testing.assert_allclose(p.grad.numpy(), numeric, rtol=0, atol=1e-8)


# paddle 3.3.1's state_dict keys and shapes (structured aliases first, then the sublayers' keys)
PADDLE_BI_LSTM_KEYS = [
    (f"{w}_l{k}{s}", [16, 3 if k == 0 else 8] if w == "weight_ih" else [16, 4] if w == "weight_hh" else [16])
    for k in range(2) for s in ("", "_reverse") for w in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")] + [
    (f"{k}.{cell}.{w}", [16, 3 if k == 0 else 8] if w == "weight_ih" else [16, 4] if w == "weight_hh" else [16])
    for k in range(2) for cell in ("cell_fw", "cell_bw") for w in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
PADDLE_PROJ_LSTM_KEYS = [  # LSTM(3, 4, proj_size=2, num_layers=2): paddle's names shift onto weight_ho
    ("weight_ih_l0", [16, 3]), ("weight_hh_l0", [16, 2]), ("bias_ih_l0", [16]), ("bias_hh_l0", [16]),
    ("weight_ih_l1", [4, 2]), ("weight_hh_l1", [16, 2]), ("bias_ih_l1", [16, 2]), ("bias_hh_l1", [16]),
    ("0.cell.weight_ih", [16, 3]), ("0.cell.weight_hh", [16, 2]), ("0.cell.bias_ih", [16]), ("0.cell.bias_hh", [16]),
    ("0.cell.weight_ho", [4, 2]), ("1.cell.weight_ih", [16, 2]), ("1.cell.weight_hh", [16, 2]),
    ("1.cell.bias_ih", [16]), ("1.cell.bias_hh", [16]), ("1.cell.weight_ho", [4, 2])]
NO_BIAS_IH_KEYS = [  # LSTM(3, 4, bias_ih_attr=False): key, shape, stop_gradient. paddle 3.3.1's keys and
    # shapes; its bias_hh_l0 is the frozen bias_ih (names shifted), but it cannot run such a layer
    ("weight_ih_l0", [16, 3], False), ("weight_hh_l0", [16, 4], False), ("bias_hh_l0", [16], False),
    ("0.cell.weight_ih", [16, 3], False), ("0.cell.weight_hh", [16, 4], False), ("0.cell.bias_ih", [16], True),
    ("0.cell.bias_hh", [16], False)]


def test_state_dict_keys_and_parameter_names_are_paddles():
    m = nn.LSTM(3, 4, num_layers=2, direction="bidirect")
    assert [(k, v.shape) for k, v in m.state_dict().items()] == PADDLE_BI_LSTM_KEYS
    assert [n for n, _ in m.named_parameters()] == [k for k, _ in PADDLE_BI_LSTM_KEYS[:16]]
    assert m.weight_ih_l1_reverse is m[1].cell_bw.weight_ih
    assert m[0].cell_fw.weight_ih.name.startswith("lstm_cell_") and m[0].cell_fw.weight_ih.name.endswith(".w_0")
    proj = nn.LSTM(3, 4, proj_size=2, num_layers=2)
    assert [(k, v.shape) for k, v in proj.state_dict().items()] == PADDLE_PROJ_LSTM_KEYS
    frozen = nn.LSTM(3, 4, bias_ih_attr=False)
    assert [(k, v.shape, v.stop_gradient) for k, v in frozen.state_dict().items()] == NO_BIAS_IH_KEYS
    assert not frozen[0].cell.bias_ih.numpy().any() and frozen.bias_hh_l0 is frozen[0].cell.bias_hh
    bare = nn.GRU(3, 4, direction="bidirect", bias_ih_attr=False, bias_hh_attr=False)  # each name on its own tensor
    assert bare.weight_ih_l0_reverse is bare[0].cell_bw.weight_ih and bare.weight_hh_l0 is bare[0].cell_fw.weight_hh
    assert not hasattr(bare, "bias_ih_l0")
    for cls, rows in ((nn.GRU, 12), (nn.SimpleRNN, 4)):
        assert [(k, v.shape) for k, v in cls(3, 4).state_dict().items()][:4] == [
            ("weight_ih_l0", [rows, 3]), ("weight_hh_l0", [rows, 4]), ("bias_ih_l0", [rows]), ("bias_hh_l0", [rows])]


def test_a_state_dict_loads_into_a_fresh_layer():
    a, b = nn.GRU(I, H, num_layers=2, direction="bidirect"), nn.GRU(I, H, num_layers=2, direction="bidirect")
    missing, unexpected = b.set_state_dict(a.state_dict())
    assert missing == [] and unexpected == []
    x = pycoll.to_tensor(det([B, T, I], 1))
    np.testing.assert_array_equal(a(x)[0].numpy(), b(x)[0].numpy())


def test_parameters_start_uniform_within_one_over_sqrt_hidden():
    m = nn.LSTM(8, 16, num_layers=2, direction="bidirect")
    values = np.concatenate([p.numpy().ravel() for p in m.parameters()])
    assert np.abs(values).max() <= 0.25 and np.abs(values).max() > 0.24
    assert abs(values.mean()) < 0.01 and values.std() == pytest.approx(0.25 / np.sqrt(3), rel=0.05)
    cell = nn.GRUCell(4, 9, weight_hh_attr=False, bias_hh_attr=False)
    assert (cell.weight_hh.numpy() == 1).all() and cell.weight_hh.stop_gradient
    assert not cell.bias_hh.numpy().any() and cell.bias_hh.stop_gradient


def test_reprs_states_and_initial_states_are_paddles():
    assert repr(nn.LSTM(3, 4)) == "LSTM(3, 4\n  (0): RNN(\n    (cell): LSTMCell(3, 4)\n  )\n)"
    assert repr(nn.SimpleRNN(3, 4, activation="relu", num_layers=2, dropout=0.1, time_major=True)) == (
        "SimpleRNN(3, 4, num_layers=2, time_major=True, dropout=0.1\n  (0): RNN(\n    (cell): SimpleRNNCell(3, 4, "
        "activation=relu)\n  )\n  (1): RNN(\n    (cell): SimpleRNNCell(4, 4, activation=relu)\n  )\n)")
    assert repr(nn.BiRNN(nn.GRUCell(3, 4), nn.GRUCell(3, 4))) == (
        "BiRNN(\n  (cell_fw): GRUCell(3, 4)\n  (cell_bw): GRUCell(3, 4)\n)")
    assert nn.LSTMCell(3, 4).state_shape == ((4,), (4,)) and nn.GRUCell(3, 4).state_shape == (4,)
    assert nn.LSTMCell(3, 4, proj_size=2).state_shape == ((2,), (4,))  # (h, c); paddle's are swapped
    cell = nn.SimpleRNNCell(3, 5)
    states = cell.get_initial_states(pycoll.zeros([7, 2, 3]), shape=[[-1, 2], [4]], dtype="float32",
                                     init_value=1.5, batch_dim_idx=1)
    assert [s.shape for s in states] == [[2, 2], [2, 4]] and states[1].dtype == np.float32
    assert (states[0].numpy() == 1.5).all()
    assert cell.get_initial_states(pycoll.zeros([6, 3])).shape == [6, 5]


def test_dropout_acts_between_layers_while_training():
    m = nn.GRU(I, H, num_layers=2, dropout=0.5)
    x = pycoll.to_tensor(det([B, T, I], 1))
    m.eval()
    kept = m(x)[0].numpy()
    reference = nn.GRU(I, H, num_layers=2)
    reference.set_state_dict(m.state_dict())
    np.testing.assert_array_equal(kept, reference(x)[0].numpy())
    m.train()
    pycoll.seed(3)
    assert not np.allclose(m(x)[0].numpy(), kept)
    one = nn.GRU(I, H, dropout=0.5)  # one layer: nothing to drop
    one_eval = one.eval()(x)[0].numpy()
    np.testing.assert_array_equal(one.train()(x)[0].numpy(), one_eval)


@pytest.mark.parametrize("make, match", [
    (lambda: nn.LSTM(3, 4, direction="backward"), "direction must be 'forward', 'bidirect' or 'bidirectional'"),
    (lambda: nn.GRU(3, 0), "hidden_size must be an int > 0"),
    (lambda: nn.GRU(3, 4, num_layers=0), "num_layers must be an int > 0"),
    (lambda: nn.SimpleRNN(3, 4, dropout=1.5), "dropout must be a number in"),
    (lambda: nn.SimpleRNN(3, 4, activation="sigmoid"), "activation must be 'tanh' or 'relu'"),
    (lambda: nn.LSTM(3, 4, proj_size=4), r"proj_size must be an int in \[0, hidden_size\)"),
    (lambda: nn.SimpleRNNCell(3, 4, activation="gelu"), "activation must be 'tanh' or 'relu'"),
    (lambda: nn.BiRNN(nn.GRUCell(3, 4), nn.GRUCell(5, 4)), "input_size of cell_fw"),
])
def test_bad_construction_is_refused_by_name(make, match):
    with pytest.raises(ValueError, match=match):
        make()


@pytest.mark.parametrize("cls", [nn.GRU, nn.SimpleRNN])
def test_a_one_state_layer_takes_its_initial_state_alone_or_in_a_list(cls):
    """paddle 3.3.1 takes h0, [h0] and (h0,) alike for GRU and SimpleRNN."""
    pycoll.seed(3)
    layer = cls(I, H, num_layers=2)
    x, h0 = pycoll.to_tensor(det([B, T, I], 1)), pycoll.to_tensor(det([2, B, H], 2))
    want_out, want_h = layer(x, h0)
    for given in ([h0], (h0,)):
        out, h = layer(x, given)
        np.testing.assert_array_equal(out.numpy(), want_out.numpy())
        np.testing.assert_array_equal(h.numpy(), want_h.numpy())


def test_bad_inputs_and_states_are_refused_by_name():
    x = pycoll.to_tensor(det([B, T, I], 1))
    with pytest.raises(ValueError, match=r"inputs must be a 3-D Tensor whose last dimension is input_size \(4\)"):
        nn.GRU(I, H)(pycoll.zeros([B, T, I + 1]))
    with pytest.raises(ValueError, match=r"GRU: initial_states must be a Tensor of shape .* = \[2, 3, 3\], got "
                                         r"shape \[1, 3, 3\]"):
        nn.GRU(I, H, num_layers=2)(x, pycoll.zeros([1, B, H]))
    with pytest.raises(ValueError, match=r"initial_states \(c\) must be a Tensor of shape .* = \[2, 3, 3\]"):
        nn.LSTM(I, H, direction="bidirect")(x, (pycoll.zeros([2, B, H]), pycoll.zeros([2, B, H + 1])))
    other = "float32" if x.dtype == pycoll.float64 else "float64"
    with pytest.raises(ValueError, match=rf"LSTM: initial_states \(h\) has dtype {other}, inputs {x.dtype}"):
        nn.LSTM(I, H)(x, (pycoll.zeros([1, B, H], dtype=other), pycoll.zeros([1, B, H], dtype=x.dtype)))
    with pytest.raises(ValueError, match=r"LSTM: inputs has dtype int64, the layer's weights float"):
        nn.LSTM(I, H)(pycoll.zeros([B, T, I], dtype="int64"))
    with pytest.raises(ValueError, match=r"LSTM: initial_states must be a list/tuple \(h, c\)"):
        nn.LSTM(I, H)(x, pycoll.zeros([1, B, H]))
    with pytest.raises(ValueError, match=r"sequence_length must be an integer Tensor of shape \[batch_size\] = \[3\]"):
        nn.LSTM(I, H)(x, None, pycoll.to_tensor([1, 2]))
    with pytest.raises(ValueError, match="sequence_length must be an integer"):
        nn.LSTM(I, H)(x, None, pycoll.to_tensor([1.0, 2.0, 3.0]))
    for lengths in ([1, 2, T + 1], [-1, 2, 2]):  # torch refuses them; paddle 3.3.1's CPU kernel aborts the process
        with pytest.raises(ValueError, match=rf"sequence_length must be in \[0, {T}\].*got values from"):
            nn.LSTM(I, H)(x, None, pycoll.to_tensor(lengths))
        with pytest.raises(ValueError, match="sequence_length must be in"):
            nn.RNN(nn.GRUCell(I, H))(x, None, pycoll.to_tensor(lengths))
    with pytest.raises(ValueError, match=r"LSTMCell: inputs must be a Tensor of shape \[batch_size, 4\]"):
        nn.LSTMCell(I, H)(pycoll.zeros([B, 5]))
    with pytest.raises(ValueError, match=r"GRUCell: states \(h\) must be a Tensor of shape \[3, 3\]"):
        nn.GRUCell(I, H)(pycoll.zeros([B, I]), pycoll.zeros([B, H + 2]))
    with pytest.raises(ValueError, match="BiRNN: initial_states must be a list/tuple of 2"):
        nn.BiRNN(nn.GRUCell(I, H), nn.GRUCell(I, H))(x, [pycoll.zeros([B, H])])
    with pytest.raises(ValueError, match="RNN: inputs must have at least one time step"):
        nn.RNN(nn.GRUCell(I, H), time_major=True)(pycoll.zeros([0, B, I]))
    with pytest.raises(TypeError, match="RNN: inputs must be a Tensor"):
        nn.RNN(nn.GRUCell(I, H))(det([B, T, I], 1))


@pytest.mark.gpu
def test_lstm_on_the_gpu_equals_the_cpu_run():
    cpu = nn.LSTM(I, H, num_layers=2, direction="bidirect")
    fill_parameters(cpu)
    results = []
    for place in ("cpu", "gpu:0"):
        m = nn.LSTM(I, H, num_layers=2, direction="bidirect")
        m.set_state_dict(cpu.state_dict())
        m.to(place)
        x = pycoll.to_tensor(det([B, T, I], 1), place=place, stop_gradient=False)
        h0 = pycoll.to_tensor(det([4, B, H], 2, 0.5), place=place, stop_gradient=False)
        c0 = pycoll.to_tensor(det([4, B, H], 3, 0.5), place=place, stop_gradient=False)
        out, (h, c) = m(x, (h0, c0), pycoll.to_tensor(LENS, place=place))
        ((out * out).sum() + h.sum() + c.sum()).backward()
        results.append([t.numpy() for t in (out, h, c, x.grad, h0.grad, c0.grad)] +
                       [p.grad.numpy() for p in m.parameters()])
    for a, b in zip(*results):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


DATA_PARALLEL_LSTM = '''
import numpy as np
import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn

class Tagger(nn.Layer):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 6, num_layers=2, direction="bidirect")
        self.head = nn.Linear(12, 2)

    def forward(self, x, lengths):
        return self.head(self.lstm(x, sequence_length=lengths)[0])

def loss_of(model, x, y, lengths):
    return ((model(pycoll.to_tensor(x), pycoll.to_tensor(lengths)) - pycoll.to_tensor(y)) ** 2).mean()

pycoll.set_default_dtype("float64")
dist.init_parallel_env()
rank = dist.get_rank()
pycoll.seed(5)
model = Tagger()
reference = Tagger()
reference.set_state_dict(model.state_dict())
dp = pycoll.DataParallel(model)
opt = pycoll.optimizer.SGD(learning_rate=0.5, parameters=dp.parameters())
ref_opt = pycoll.optimizer.SGD(learning_rate=0.5, parameters=reference.parameters())
for step in range(2):
    rng = np.random.default_rng(step)
    x, y = rng.standard_normal((4, 5, 4)), rng.standard_normal((4, 5, 2))
    lengths = np.array([5, 2, 4, 1])
    loss_of(dp, x[2 * rank:2 * rank + 2], y[2 * rank:2 * rank + 2], lengths[2 * rank:2 * rank + 2]).backward()
    opt.step()
    opt.clear_grad()
    ((loss_of(reference, x[:2], y[:2], lengths[:2]) + loss_of(reference, x[2:], y[2:], lengths[2:])) / 2).backward()
    ref_opt.step()
    ref_opt.clear_grad()
for (name, p), q in zip(model.named_parameters(), reference.parameters()):
    assert np.abs(p.numpy() - q.numpy()).max() < 1e-12, name
print(f"OK rank={rank}")
'''


def test_an_lstm_trains_under_data_parallel_as_in_one_process(tmp_path):
    """Two ranks, each with half the batch (and its own sequence lengths): after two SGD steps
    the parameters are those of one process training on the whole batch."""
    from conftest import assert_ok, launch

    script = tmp_path / "lstm_data_parallel.py"
    script.write_text(DATA_PARALLEL_LSTM)
    assert_ok(launch(2, script, timeout=120), expect_lines=2)


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU, nn.SimpleRNN])
def test_a_batch_of_none_runs_through(cls):
    x = pycoll.zeros([0, T, I])
    x.stop_gradient = False
    out, _ = cls(I, H, direction="bidirect")(x)
    out.sum().backward()
    assert out.shape == [0, T, 2 * H] and x.grad.shape == [0, T, I]
