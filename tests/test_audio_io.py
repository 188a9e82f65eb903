"""pycoll.audio's file I/O (paddle's wave backend): PCM16 WAV save / load / info and the backend switch."""
import io
import wave

import numpy as np
import pytest

import pycoll
from pycoll import audio

# paddle 3.3.1 wrote these int16 frames (interleaved) for X, and loaded them back as LOADED
X = np.array([[0.5, -0.25, 0.999, 0.1], [0.0, -1.0, 0.3, -0.7]], np.float32)
FRAMES = [16384, 0, -8192, -32768, 32735, 9830, 3276, -22937]
LOADED = [[0.5, -0.25, 0.998992919921875, 0.0999755859375], [0.0, -1.0, 0.29998779296875, -0.699981689453125]]


def test_save_writes_pcm16_as_paddle(tmp_path):
    path = str(tmp_path / "x.wav")
    audio.save(path, pycoll.to_tensor(X), 16000)
    with wave.open(path) as reader:  # read back with the standard library, not pycoll
        assert (reader.getnchannels(), reader.getsampwidth(), reader.getframerate()) == (2, 2, 16000)
        assert np.frombuffer(reader.readframes(4), "<i2").tolist() == FRAMES
    audio.save(path, pycoll.to_tensor(X.T), 16000, channels_first=False)
    with wave.open(path) as reader:
        assert np.frombuffer(reader.readframes(4), "<i2").tolist() == FRAMES


def test_load_and_info(tmp_path):
    path = str(tmp_path / "x.wav")
    audio.save(path, pycoll.to_tensor(X), 16000)
    waveform, rate = audio.load(path)
    assert rate == 16000 and waveform.dtype == pycoll.float32
    np.testing.assert_array_equal(waveform.numpy(), LOADED)
    part, _ = audio.load(path, frame_offset=1, num_frames=2, normalize=False, channels_first=False)
    np.testing.assert_array_equal(part.numpy(), [[-8192, -32768], [32735, 9830]])
    tail, _ = audio.load(path, frame_offset=3)  # applied without num_frames too (paddle 3.3.1 ignores it)
    np.testing.assert_array_equal(tail.numpy(), np.array(LOADED)[:, 3:])
    with open(path, "rb") as f:  # a file object too
        meta = audio.info(io.BytesIO(f.read()))
    assert (meta.sample_rate, meta.num_samples, meta.num_channels, meta.bits_per_sample, meta.encoding) == \
        (16000, 4, 2, 16, "PCM_S")


def test_save_clips_and_checks(tmp_path):
    path = str(tmp_path / "x.wav")
    audio.save(path, pycoll.to_tensor(np.array([[1.0, -1.5]], np.float64)), 8000)
    with wave.open(path) as reader:
        assert np.frombuffer(reader.readframes(2), "<i2").tolist() == [32767, -32768]  # paddle wraps 1.0 round
    audio.save(path, pycoll.to_tensor(np.array([[7, -7]], np.int16)), 8000)
    assert audio.load(path, normalize=False)[0].numpy().tolist() == [[7.0, -7.0]]
    with pytest.raises(ValueError, match="2-D"):
        audio.save(path, pycoll.ones([3]), 8000)
    with pytest.raises(ValueError, match="bits_per_sample"):
        audio.save(path, pycoll.ones([1, 3]), 8000, bits_per_sample=24)
    with pytest.raises(TypeError, match="int16"):
        audio.save(path, pycoll.to_tensor(np.ones((1, 2), np.int32)), 8000)


def test_not_pcm16_and_backends(tmp_path):
    bad = tmp_path / "x.txt"
    bad.write_text("not audio")
    with pytest.raises(NotImplementedError, match="only PCM16 WAV supported"):
        audio.load(str(bad))
    eight_bit = str(tmp_path / "u8.wav")
    with wave.open(eight_bit, "wb") as writer:
        writer.setnchannels(1)
        writer.setsampwidth(1)
        writer.setframerate(8000)
        writer.writeframes(bytes([1, 2]))
    with pytest.raises(NotImplementedError, match="8-bit"):
        audio.info(eight_bit)
    assert audio.backends.list_available_backends() == ["wave_backend"]
    assert audio.backends.get_current_backend() == "wave_backend"
    audio.backends.set_backend("wave_backend")
    with pytest.raises(NotImplementedError, match="soundfile"):
        audio.backends.set_backend("soundfile")
