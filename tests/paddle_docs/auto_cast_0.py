# doctest: +REQUIRES(env:GPU)
import pycoll
conv2d = pycoll.nn.Conv2D(3, 2, 3, bias_attr=False)
data = pycoll.rand([10, 3, 32, 32])
with pycoll.amp.auto_cast():
    conv = conv2d(data)
    print(conv.dtype)
# doctest: +SKIP("This has diff in xdoctest env")
# doctest: -SKIP
with pycoll.amp.auto_cast(enable=False):
    conv = conv2d(data)
    print(conv.dtype)
# doctest: +SKIP("This has diff in xdoctest env")
# doctest: -SKIP
with pycoll.amp.auto_cast(custom_black_list={'conv2d'}):
    conv = conv2d(data)
    print(conv.dtype)
# doctest: +SKIP("This has diff in xdoctest env")
# doctest: -SKIP
a = pycoll.rand([2, 3])
b = pycoll.rand([2, 3])
with pycoll.amp.auto_cast(custom_white_list={'elementwise_add'}):
    c = a + b
    print(c.dtype)
# doctest: +SKIP("This has diff in xdoctest env")
# doctest: -SKIP
with pycoll.amp.auto_cast(custom_white_list={'elementwise_add'}, level='O2'):
    d = a + b
    print(d.dtype)
# doctest: +SKIP("This has diff in xdoctest env")
# doctest: -SKIP
