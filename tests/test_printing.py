"""`repr(tensor)` prints what paddle 3.3.1 prints, and `pycoll.set_printoptions` (pycoll._printing).

Every expected string in CASES was printed by paddle 3.3.1 (CPU) with
``repr(paddle.to_tensor(values, stop_gradient=...))`` after ``paddle.set_printoptions(**options)``,
and is stored here so that the test does not need paddle.
"""
import numpy as np
import pytest

import pycoll
from pycoll import _printing

DEFAULTS = dict(precision=8, threshold=1000, edgeitems=3, sci_mode=False, linewidth=80)


@pytest.fixture(autouse=True)
def _default_printoptions():
    pycoll.set_printoptions(**DEFAULTS)
    yield
    pycoll.set_printoptions(**DEFAULTS)


# printed by paddle 3.3.1
CASES = [
    pytest.param(lambda: np.array([0., 1., 2.], 'float32'), {}, True, """\
Tensor(shape=[3], dtype=float32, place=Place(cpu), stop_gradient=True,
       [0., 1., 2.])""",
                 id="float32_integral"),
    pytest.param(lambda: np.array([[1.5, -2.25], [3., 4.]], 'float32'), {}, True, """\
Tensor(shape=[2, 2], dtype=float32, place=Place(cpu), stop_gradient=True,
       [[ 1.50000000, -2.25000000],
        [ 3.        ,  4.        ]])""",
                 id="float32_signed_matrix"),
    pytest.param(lambda: np.array([-1., 2.5], 'float32'), {}, True, """\
Tensor(shape=[2], dtype=float32, place=Place(cpu), stop_gradient=True,
       [-1.       , 2.50000000])""",
                 id="negative_item_as_wide_as_width"),
    pytest.param(lambda: np.array([1e10, 1e-10, 0.5], 'float32'), {}, True, """\
Tensor(shape=[3], dtype=float32, place=Place(cpu), stop_gradient=True,
       [10000000000., 0.00000000  , 0.50000000  ])""",
                 id="large_and_tiny"),
    pytest.param(lambda: np.array([np.inf, -np.inf, np.nan, 1.5], 'float32'), {}, True, """\
Tensor(shape=[4], dtype=float32, place=Place(cpu), stop_gradient=True,
       [ inf.     , -inf.     ,  nan      , 1.50000000])""",
                 id="inf_nan"),
    pytest.param(lambda: np.array([-0.0, 0.0], 'float32'), {}, True, """\
Tensor(shape=[2], dtype=float32, place=Place(cpu), stop_gradient=True,
       [-0., 0. ])""",
                 id="negative_zero"),
    pytest.param(lambda: np.array([1, 1, 1, 1.5, 1, 1, 1], 'float32'), {}, True, """\
Tensor(shape=[7], dtype=float32, place=Place(cpu), stop_gradient=True,
       [1., 1., 1., 1.50000000, 1., 1., 1.])""",
                 id="middle_item_wider_than_edges"),
    pytest.param(lambda: np.random.default_rng(0).standard_normal((4, 4)).astype('float32'), {}, True, """\
Tensor(shape=[4, 4], dtype=float32, place=Place(cpu), stop_gradient=True,
       [[ 0.12573022, -0.13210486,  0.64042264,  0.10490011],
        [-0.53566939,  0.36159506,  1.30400002,  0.94708097],
        [-0.70373523, -1.26542151, -0.62327445,  0.04132598],
        [-2.32503080, -0.21879166, -1.24591100, -0.73226738]])""",
                 id="random_normal"),
    pytest.param(lambda: np.array([0.1, 0.2, -3.], 'float16'), {}, True, """\
Tensor(shape=[3], dtype=float16, place=Place(cpu), stop_gradient=True,
       [0.09997559, 0.19995117, -3.       ])""",
                 id="float16"),
    pytest.param(lambda: np.array([np.pi, -np.e, 1e-5, 1e20]), {}, True, """\
Tensor(shape=[4], dtype=float64, place=Place(cpu), stop_gradient=True,
       [ 3.14159265           , -2.71828183           ,  0.00001000           ,
        100000000000000000000.])""",
                 id="float64"),
    pytest.param(lambda: np.array(3.5, 'float32'), {}, True, """\
Tensor(shape=[], dtype=float32, place=Place(cpu), stop_gradient=True,
       3.50000000)""",
                 id="scalar_float"),
    pytest.param(lambda: np.array(-2.25, 'float64'), {}, True, """\
Tensor(shape=[], dtype=float64, place=Place(cpu), stop_gradient=True,
       -2.25000000)""",
                 id="scalar_negative_float"),
    pytest.param(lambda: np.array(7., 'float32'), {}, True, """\
Tensor(shape=[], dtype=float32, place=Place(cpu), stop_gradient=True,
       7.)""",
                 id="scalar_integral_float"),
    pytest.param(lambda: np.array(np.nan, 'float32'), {}, True, """\
Tensor(shape=[], dtype=float32, place=Place(cpu), stop_gradient=True,
       nan)""",
                 id="scalar_nan"),
    pytest.param(lambda: np.array(3, 'int64'), {}, True, """\
Tensor(shape=[], dtype=int64, place=Place(cpu), stop_gradient=True,
       3)""",
                 id="scalar_int"),
    pytest.param(lambda: np.array(True), {}, True, """\
Tensor(shape=[], dtype=bool, place=Place(cpu), stop_gradient=True,
       True)""",
                 id="scalar_bool"),
    pytest.param(lambda: np.array([True, False]), {}, True, """\
Tensor(shape=[2], dtype=bool, place=Place(cpu), stop_gradient=True,
       [True , False])""",
                 id="bool_vector"),
    pytest.param(lambda: np.array([[True, True], [False, True]]), {}, True, """\
Tensor(shape=[2, 2], dtype=bool, place=Place(cpu), stop_gradient=True,
       [[True , True ],
        [False, True ]])""",
                 id="bool_matrix"),
    pytest.param(lambda: np.array([-128, 0, 127], 'int8'), {}, True, """\
Tensor(shape=[3], dtype=int8, place=Place(cpu), stop_gradient=True,
       [-128,  0  ,  127])""",
                 id="int8"),
    pytest.param(lambda: np.array([[1, -20], [300, 4]], 'int16'), {}, True, """\
Tensor(shape=[2, 2], dtype=int16, place=Place(cpu), stop_gradient=True,
       [[ 1 , -20],
        [300,  4 ]])""",
                 id="int16"),
    pytest.param(lambda: np.arange(6, dtype='int32').reshape(2, 3), {}, True, """\
Tensor(shape=[2, 3], dtype=int32, place=Place(cpu), stop_gradient=True,
       [[0, 1, 2],
        [3, 4, 5]])""",
                 id="int32"),
    pytest.param(lambda: np.array([2**40, -7], 'int64'), {}, True, """\
Tensor(shape=[2], dtype=int64, place=Place(cpu), stop_gradient=True,
       [1099511627776, -7           ])""",
                 id="int64_large"),
    pytest.param(lambda: np.array([0, 1, 255], 'uint8'), {}, True, """\
Tensor(shape=[3], dtype=uint8, place=Place(cpu), stop_gradient=True,
       [0  , 1  , 255])""",
                 id="uint8"),
    pytest.param(lambda: np.array([1 + 2j, -1 - 0.5j, 0 - 3j], 'complex64'), {}, True, """\
Tensor(shape=[3], dtype=complex64, place=Place(cpu), stop_gradient=True,
       [ (1.00000000+2.00000000j), (-1.00000000-0.50000000j),
        (0.00000000-3.00000000j) ])""",
                 id="complex64"),
    pytest.param(lambda: np.zeros([0], 'float32'), {}, True, """\
Tensor(shape=[0], dtype=float32, place=Place(cpu), stop_gradient=True,
       [])""",
                 id="empty"),
    pytest.param(lambda: np.zeros([2, 0], 'float32'), {}, True, """\
Tensor(shape=[2, 0], dtype=float32, place=Place(cpu), stop_gradient=True,
       [[],
        []])""",
                 id="empty_rows"),
    pytest.param(lambda: np.zeros([0, 3], 'int32'), {}, True, """\
Tensor(shape=[0, 3], dtype=int32, place=Place(cpu), stop_gradient=True,
       [])""",
                 id="empty_first_dim"),
    pytest.param(lambda: np.zeros([2, 0, 3], 'float64'), {}, True, """\
Tensor(shape=[2, 0, 3], dtype=float64, place=Place(cpu), stop_gradient=True,
       [[],

        []])""",
                 id="empty_3d"),
    pytest.param(lambda: np.arange(30, dtype='float32').reshape(2, 3, 5) / 7, {}, True, """\
Tensor(shape=[2, 3, 5], dtype=float32, place=Place(cpu), stop_gradient=True,
       [[[0.        , 0.14285715, 0.28571430, 0.42857143, 0.57142860],
         [0.71428573, 0.85714287, 1.        , 1.14285719, 1.28571427],
         [1.42857146, 1.57142854, 1.71428573, 1.85714281, 2.        ]],

        [[2.14285707, 2.28571439, 2.42857146, 2.57142854, 2.71428561],
         [2.85714293, 3.        , 3.14285707, 3.28571439, 3.42857146],
         [3.57142854, 3.71428561, 3.85714293, 4.        , 4.14285707]]])""",
                 id="rank3"),
    pytest.param(lambda: np.arange(16, dtype='int64').reshape(2, 2, 2, 2) - 8, {}, True, """\
Tensor(shape=[2, 2, 2, 2], dtype=int64, place=Place(cpu), stop_gradient=True,
       [[[[-8, -7],
          [-6, -5]],

         [[-4, -3],
          [-2, -1]]],


        [[[ 0,  1],
          [ 2,  3]],

         [[ 4,  5],
          [ 6,  7]]]])""",
                 id="rank4"),
    pytest.param(lambda: np.linspace(-1, 1, 20, dtype='float32'), {}, True, """\
Tensor(shape=[20], dtype=float32, place=Place(cpu), stop_gradient=True,
       [-1.        , -0.89473683, -0.78947371, -0.68421054, -0.57894737,
        -0.47368422, -0.36842105, -0.26315790, -0.15789473, -0.05263158,
         0.05263158,  0.15789473,  0.26315790,  0.36842105,  0.47368422,
         0.57894737,  0.68421054,  0.78947371,  0.89473683,  1.        ])""",
                 id="wrapped_vector"),
    pytest.param(lambda: np.arange(90, dtype='float32').reshape(3, 30) / 3, {}, True, """\
Tensor(shape=[3, 30], dtype=float32, place=Place(cpu), stop_gradient=True,
       [[0.         , 0.33333334 , 0.66666669 , 1.         , 1.33333337 ,
         1.66666663 , 2.         , 2.33333325 , 2.66666675 , 3.         ,
         3.33333325 , 3.66666675 , 4.         , 4.33333349 , 4.66666651 ,
         5.         , 5.33333349 , 5.66666651 , 6.         , 6.33333349 ,
         6.66666651 , 7.         , 7.33333349 , 7.66666651 , 8.         ,
         8.33333302 , 8.66666698 , 9.         , 9.33333302 , 9.66666698 ],
        [10.        , 10.33333302, 10.66666698, 11.        , 11.33333302,
         11.66666698, 12.        , 12.33333302, 12.66666698, 13.        ,
         13.33333302, 13.66666698, 14.        , 14.33333302, 14.66666698,
         15.        , 15.33333302, 15.66666698, 16.        , 16.33333397,
         16.66666603, 17.        , 17.33333397, 17.66666603, 18.        ,
         18.33333397, 18.66666603, 19.        , 19.33333397, 19.66666603],
        [20.        , 20.33333397, 20.66666603, 21.        , 21.33333397,
         21.66666603, 22.        , 22.33333397, 22.66666603, 23.        ,
         23.33333397, 23.66666603, 24.        , 24.33333397, 24.66666603,
         25.        , 25.33333397, 25.66666603, 26.        , 26.33333397,
         26.66666603, 27.        , 27.33333397, 27.66666603, 28.        ,
         28.33333397, 28.66666603, 29.        , 29.33333397, 29.66666603]])""",
                 id="wrapped_rows"),
    pytest.param(lambda: np.arange(-50, 50, dtype='int64'), {}, True, """\
Tensor(shape=[100], dtype=int64, place=Place(cpu), stop_gradient=True,
       [-50, -49, -48, -47, -46, -45, -44, -43, -42, -41, -40, -39, -38, -37,
        -36, -35, -34, -33, -32, -31, -30, -29, -28, -27, -26, -25, -24, -23,
        -22, -21, -20, -19, -18, -17, -16, -15, -14, -13, -12, -11, -10, -9 ,
        -8 , -7 , -6 , -5 , -4 , -3 , -2 , -1 ,  0 ,  1 ,  2 ,  3 ,  4 ,  5 ,
         6 ,  7 ,  8 ,  9 ,  10,  11,  12,  13,  14,  15,  16,  17,  18,  19,
         20,  21,  22,  23,  24,  25,  26,  27,  28,  29,  30,  31,  32,  33,
         34,  35,  36,  37,  38,  39,  40,  41,  42,  43,  44,  45,  46,  47,
         48,  49])""",
                 id="wrapped_ints"),
    pytest.param(lambda: np.arange(2000, dtype='float32').reshape(40, 50), {}, True, """\
Tensor(shape=[40, 50], dtype=float32, place=Place(cpu), stop_gradient=True,
       [[0.   , 1.   , 2.   , ..., 47.  , 48.  , 49.  ],
        [50.  , 51.  , 52.  , ..., 97.  , 98.  , 99.  ],
        [100. , 101. , 102. , ..., 147. , 148. , 149. ],
        ...,
        [1850., 1851., 1852., ..., 1897., 1898., 1899.],
        [1900., 1901., 1902., ..., 1947., 1948., 1949.],
        [1950., 1951., 1952., ..., 1997., 1998., 1999.]])""",
                 id="summary_matrix"),
    pytest.param(lambda: np.arange(2000, dtype='int32'), {}, True, """\
Tensor(shape=[2000], dtype=int32, place=Place(cpu), stop_gradient=True,
       [0   , 1   , 2   , ..., 1997, 1998, 1999])""",
                 id="summary_vector"),
    pytest.param(lambda: np.arange(1331, dtype='float64').reshape(11, 11, 11) / 10, {}, True, """\
Tensor(shape=[11, 11, 11], dtype=float64, place=Place(cpu), stop_gradient=True,
       [[[0.          , 0.10000000  , 0.20000000  , ..., 0.80000000  ,
          0.90000000  , 1.          ],
         [1.10000000  , 1.20000000  , 1.30000000  , ..., 1.90000000  ,
          2.          , 2.10000000  ],
         [2.20000000  , 2.30000000  , 2.40000000  , ..., 3.          ,
          3.10000000  , 3.20000000  ],
         ...,
         [8.80000000  , 8.90000000  , 9.          , ..., 9.60000000  ,
          9.70000000  , 9.80000000  ],
         [9.90000000  , 10.         , 10.10000000 , ..., 10.70000000 ,
          10.80000000 , 10.90000000 ],
         [11.         , 11.10000000 , 11.20000000 , ..., 11.80000000 ,
          11.90000000 , 12.         ]],

        [[12.10000000 , 12.20000000 , 12.30000000 , ..., 12.90000000 ,
          13.         , 13.10000000 ],
         [13.20000000 , 13.30000000 , 13.40000000 , ..., 14.         ,
          14.10000000 , 14.20000000 ],
         [14.30000000 , 14.40000000 , 14.50000000 , ..., 15.10000000 ,
          15.20000000 , 15.30000000 ],
         ...,
         [20.90000000 , 21.         , 21.10000000 , ..., 21.70000000 ,
          21.80000000 , 21.90000000 ],
         [22.         , 22.10000000 , 22.20000000 , ..., 22.80000000 ,
          22.90000000 , 23.         ],
         [23.10000000 , 23.20000000 , 23.30000000 , ..., 23.90000000 ,
          24.         , 24.10000000 ]],

        [[24.20000000 , 24.30000000 , 24.40000000 , ..., 25.         ,
          25.10000000 , 25.20000000 ],
         [25.30000000 , 25.40000000 , 25.50000000 , ..., 26.10000000 ,
          26.20000000 , 26.30000000 ],
         [26.40000000 , 26.50000000 , 26.60000000 , ..., 27.20000000 ,
          27.30000000 , 27.40000000 ],
         ...,
         [33.         , 33.10000000 , 33.20000000 , ..., 33.80000000 ,
          33.90000000 , 34.         ],
         [34.10000000 , 34.20000000 , 34.30000000 , ..., 34.90000000 ,
          35.         , 35.10000000 ],
         [35.20000000 , 35.30000000 , 35.40000000 , ..., 36.         ,
          36.10000000 , 36.20000000 ]],

        ...,

        [[96.80000000 , 96.90000000 , 97.         , ..., 97.60000000 ,
          97.70000000 , 97.80000000 ],
         [97.90000000 , 98.         , 98.10000000 , ..., 98.70000000 ,
          98.80000000 , 98.90000000 ],
         [99.         , 99.10000000 , 99.20000000 , ..., 99.80000000 ,
          99.90000000 , 100.        ],
         ...,
         [105.60000000, 105.70000000, 105.80000000, ..., 106.40000000,
          106.50000000, 106.60000000],
         [106.70000000, 106.80000000, 106.90000000, ..., 107.50000000,
          107.60000000, 107.70000000],
         [107.80000000, 107.90000000, 108.        , ..., 108.60000000,
          108.70000000, 108.80000000]],

        [[108.90000000, 109.        , 109.10000000, ..., 109.70000000,
          109.80000000, 109.90000000],
         [110.        , 110.10000000, 110.20000000, ..., 110.80000000,
          110.90000000, 111.        ],
         [111.10000000, 111.20000000, 111.30000000, ..., 111.90000000,
          112.        , 112.10000000],
         ...,
         [117.70000000, 117.80000000, 117.90000000, ..., 118.50000000,
          118.60000000, 118.70000000],
         [118.80000000, 118.90000000, 119.        , ..., 119.60000000,
          119.70000000, 119.80000000],
         [119.90000000, 120.        , 120.10000000, ..., 120.70000000,
          120.80000000, 120.90000000]],

        [[121.        , 121.10000000, 121.20000000, ..., 121.80000000,
          121.90000000, 122.        ],
         [122.10000000, 122.20000000, 122.30000000, ..., 122.90000000,
          123.        , 123.10000000],
         [123.20000000, 123.30000000, 123.40000000, ..., 124.        ,
          124.10000000, 124.20000000],
         ...,
         [129.80000000, 129.90000000, 130.        , ..., 130.60000000,
          130.70000000, 130.80000000],
         [130.90000000, 131.        , 131.10000000, ..., 131.70000000,
          131.80000000, 131.90000000],
         [132.        , 132.10000000, 132.20000000, ..., 132.80000000,
          132.90000000, 133.        ]]])""",
                 id="summary_rank3"),
    pytest.param(lambda: np.arange(1200).reshape(30, 40) % 3 == 0, {}, True, """\
Tensor(shape=[30, 40], dtype=bool, place=Place(cpu), stop_gradient=True,
       [[True , False, False, ..., False, False, True ],
        [False, False, True , ..., False, True , False],
        [False, True , False, ..., True , False, False],
        ...,
        [True , False, False, ..., False, False, True ],
        [False, False, True , ..., False, True , False],
        [False, True , False, ..., True , False, False]])""",
                 id="summary_bool"),
    pytest.param(lambda: np.arange(1000, dtype='int64').reshape(10, 100), {}, True, """\
Tensor(shape=[10, 100], dtype=int64, place=Place(cpu), stop_gradient=True,
       [[0  , 1  , 2  , 3  , 4  , 5  , 6  , 7  , 8  , 9  , 10 , 11 , 12 , 13 ,
         14 , 15 , 16 , 17 , 18 , 19 , 20 , 21 , 22 , 23 , 24 , 25 , 26 , 27 ,
         28 , 29 , 30 , 31 , 32 , 33 , 34 , 35 , 36 , 37 , 38 , 39 , 40 , 41 ,
         42 , 43 , 44 , 45 , 46 , 47 , 48 , 49 , 50 , 51 , 52 , 53 , 54 , 55 ,
         56 , 57 , 58 , 59 , 60 , 61 , 62 , 63 , 64 , 65 , 66 , 67 , 68 , 69 ,
         70 , 71 , 72 , 73 , 74 , 75 , 76 , 77 , 78 , 79 , 80 , 81 , 82 , 83 ,
         84 , 85 , 86 , 87 , 88 , 89 , 90 , 91 , 92 , 93 , 94 , 95 , 96 , 97 ,
         98 , 99 ],
        [100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113,
         114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127,
         128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 140, 141,
         142, 143, 144, 145, 146, 147, 148, 149, 150, 151, 152, 153, 154, 155,
         156, 157, 158, 159, 160, 161, 162, 163, 164, 165, 166, 167, 168, 169,
         170, 171, 172, 173, 174, 175, 176, 177, 178, 179, 180, 181, 182, 183,
         184, 185, 186, 187, 188, 189, 190, 191, 192, 193, 194, 195, 196, 197,
         198, 199],
        [200, 201, 202, 203, 204, 205, 206, 207, 208, 209, 210, 211, 212, 213,
         214, 215, 216, 217, 218, 219, 220, 221, 222, 223, 224, 225, 226, 227,
         228, 229, 230, 231, 232, 233, 234, 235, 236, 237, 238, 239, 240, 241,
         242, 243, 244, 245, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255,
         256, 257, 258, 259, 260, 261, 262, 263, 264, 265, 266, 267, 268, 269,
         270, 271, 272, 273, 274, 275, 276, 277, 278, 279, 280, 281, 282, 283,
         284, 285, 286, 287, 288, 289, 290, 291, 292, 293, 294, 295, 296, 297,
         298, 299],
        [300, 301, 302, 303, 304, 305, 306, 307, 308, 309, 310, 311, 312, 313,
         314, 315, 316, 317, 318, 319, 320, 321, 322, 323, 324, 325, 326, 327,
         328, 329, 330, 331, 332, 333, 334, 335, 336, 337, 338, 339, 340, 341,
         342, 343, 344, 345, 346, 347, 348, 349, 350, 351, 352, 353, 354, 355,
         356, 357, 358, 359, 360, 361, 362, 363, 364, 365, 366, 367, 368, 369,
         370, 371, 372, 373, 374, 375, 376, 377, 378, 379, 380, 381, 382, 383,
         384, 385, 386, 387, 388, 389, 390, 391, 392, 393, 394, 395, 396, 397,
         398, 399],
        [400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413,
         414, 415, 416, 417, 418, 419, 420, 421, 422, 423, 424, 425, 426, 427,
         428, 429, 430, 431, 432, 433, 434, 435, 436, 437, 438, 439, 440, 441,
         442, 443, 444, 445, 446, 447, 448, 449, 450, 451, 452, 453, 454, 455,
         456, 457, 458, 459, 460, 461, 462, 463, 464, 465, 466, 467, 468, 469,
         470, 471, 472, 473, 474, 475, 476, 477, 478, 479, 480, 481, 482, 483,
         484, 485, 486, 487, 488, 489, 490, 491, 492, 493, 494, 495, 496, 497,
         498, 499],
        [500, 501, 502, 503, 504, 505, 506, 507, 508, 509, 510, 511, 512, 513,
         514, 515, 516, 517, 518, 519, 520, 521, 522, 523, 524, 525, 526, 527,
         528, 529, 530, 531, 532, 533, 534, 535, 536, 537, 538, 539, 540, 541,
         542, 543, 544, 545, 546, 547, 548, 549, 550, 551, 552, 553, 554, 555,
         556, 557, 558, 559, 560, 561, 562, 563, 564, 565, 566, 567, 568, 569,
         570, 571, 572, 573, 574, 575, 576, 577, 578, 579, 580, 581, 582, 583,
         584, 585, 586, 587, 588, 589, 590, 591, 592, 593, 594, 595, 596, 597,
         598, 599],
        [600, 601, 602, 603, 604, 605, 606, 607, 608, 609, 610, 611, 612, 613,
         614, 615, 616, 617, 618, 619, 620, 621, 622, 623, 624, 625, 626, 627,
         628, 629, 630, 631, 632, 633, 634, 635, 636, 637, 638, 639, 640, 641,
         642, 643, 644, 645, 646, 647, 648, 649, 650, 651, 652, 653, 654, 655,
         656, 657, 658, 659, 660, 661, 662, 663, 664, 665, 666, 667, 668, 669,
         670, 671, 672, 673, 674, 675, 676, 677, 678, 679, 680, 681, 682, 683,
         684, 685, 686, 687, 688, 689, 690, 691, 692, 693, 694, 695, 696, 697,
         698, 699],
        [700, 701, 702, 703, 704, 705, 706, 707, 708, 709, 710, 711, 712, 713,
         714, 715, 716, 717, 718, 719, 720, 721, 722, 723, 724, 725, 726, 727,
         728, 729, 730, 731, 732, 733, 734, 735, 736, 737, 738, 739, 740, 741,
         742, 743, 744, 745, 746, 747, 748, 749, 750, 751, 752, 753, 754, 755,
         756, 757, 758, 759, 760, 761, 762, 763, 764, 765, 766, 767, 768, 769,
         770, 771, 772, 773, 774, 775, 776, 777, 778, 779, 780, 781, 782, 783,
         784, 785, 786, 787, 788, 789, 790, 791, 792, 793, 794, 795, 796, 797,
         798, 799],
        [800, 801, 802, 803, 804, 805, 806, 807, 808, 809, 810, 811, 812, 813,
         814, 815, 816, 817, 818, 819, 820, 821, 822, 823, 824, 825, 826, 827,
         828, 829, 830, 831, 832, 833, 834, 835, 836, 837, 838, 839, 840, 841,
         842, 843, 844, 845, 846, 847, 848, 849, 850, 851, 852, 853, 854, 855,
         856, 857, 858, 859, 860, 861, 862, 863, 864, 865, 866, 867, 868, 869,
         870, 871, 872, 873, 874, 875, 876, 877, 878, 879, 880, 881, 882, 883,
         884, 885, 886, 887, 888, 889, 890, 891, 892, 893, 894, 895, 896, 897,
         898, 899],
        [900, 901, 902, 903, 904, 905, 906, 907, 908, 909, 910, 911, 912, 913,
         914, 915, 916, 917, 918, 919, 920, 921, 922, 923, 924, 925, 926, 927,
         928, 929, 930, 931, 932, 933, 934, 935, 936, 937, 938, 939, 940, 941,
         942, 943, 944, 945, 946, 947, 948, 949, 950, 951, 952, 953, 954, 955,
         956, 957, 958, 959, 960, 961, 962, 963, 964, 965, 966, 967, 968, 969,
         970, 971, 972, 973, 974, 975, 976, 977, 978, 979, 980, 981, 982, 983,
         984, 985, 986, 987, 988, 989, 990, 991, 992, 993, 994, 995, 996, 997,
         998, 999]])""",
                 id="not_summarised_at_threshold"),
    pytest.param(lambda: np.array([1.5, 2.], 'float32'), {}, False, """\
Tensor(shape=[2], dtype=float32, place=Place(cpu), stop_gradient=False,
       [1.50000000, 2.        ])""",
                 id="stop_gradient_false"),
    pytest.param(lambda: np.random.default_rng(0).random((3, 4)).astype('float32'), {'precision': 4}, True, """\
Tensor(shape=[3, 4], dtype=float32, place=Place(cpu), stop_gradient=True,
       [[0.6370, 0.2698, 0.0410, 0.0165],
        [0.8133, 0.9128, 0.6066, 0.7295],
        [0.5436, 0.9351, 0.8159, 0.0027]])""",
                 id="option_precision"),
    pytest.param(lambda: np.array([0.4, 1.6, -2.5], 'float64'), {'precision': 0}, True, """\
Tensor(shape=[3], dtype=float64, place=Place(cpu), stop_gradient=True,
       [ 0,  2, -2])""",
                 id="option_precision_zero"),
    pytest.param(lambda: np.array([[1.5, -2.25e-7], [3e12, 0.]], 'float32'), {'sci_mode': True}, True, """\
Tensor(shape=[2, 2], dtype=float32, place=Place(cpu), stop_gradient=True,
       [[ 1.50000000e+00, -2.24999994e-07],
        [ 3.00000005e+12,  0.00000000e+00]])""",
                 id="option_sci_mode"),
    pytest.param(lambda: np.array([123.456, -0.001], 'float64'), {'sci_mode': True, 'precision': 2}, True, """\
Tensor(shape=[2], dtype=float64, place=Place(cpu), stop_gradient=True,
       [ 1.23e+02, -1.00e-03])""",
                 id="option_sci_precision"),
    pytest.param(lambda: np.arange(30, dtype='float32').reshape(5, 6), {'threshold': 10, 'edgeitems': 2}, True, """\
Tensor(shape=[5, 6], dtype=float32, place=Place(cpu), stop_gradient=True,
       [[0. , 1. , ..., 4. , 5. ],
        [6. , 7. , ..., 10., 11.],
        ...,
        [18., 19., ..., 22., 23.],
        [24., 25., ..., 28., 29.]])""",
                 id="option_threshold_edgeitems"),
    pytest.param(lambda: np.arange(12, dtype='int64').reshape(3, 4), {'threshold': 5, 'edgeitems': 0}, True, """\
Tensor(shape=[3, 4], dtype=int64, place=Place(cpu), stop_gradient=True,
       [...])""",
                 id="option_edgeitems_zero"),
    pytest.param(lambda: np.linspace(0, 1, 12, dtype='float32'), {'linewidth': 40}, True, """\
Tensor(shape=[12], dtype=float32, place=Place(cpu), stop_gradient=True,
       [0.        , 0.09090909,
        0.18181819, 0.27272728,
        0.36363637, 0.45454547,
        0.54545456, 0.63636363,
        0.72727275, 0.81818181,
        0.90909094, 1.        ])""",
                 id="option_linewidth"),
    pytest.param(lambda: np.arange(6, dtype='float32').reshape(2, 3) + 0.5, {'linewidth': 5}, True, """\
Tensor(shape=[2, 3], dtype=float32, place=Place(cpu), stop_gradient=True,
       [[0.50000000,
         1.50000000,
         2.50000000],
        [3.50000000,
         4.50000000,
         5.50000000]])""",
                 id="option_linewidth_narrow"),
    pytest.param(lambda: np.random.default_rng(0).random((10, 20)).astype('float32'),
                 {'precision': 4, 'threshold': 100, 'edgeitems': 3}, True, """\
Tensor(shape=[10, 20], dtype=float32, place=Place(cpu), stop_gradient=True,
       [[0.6370, 0.2698, 0.0410, ..., 0.5415, 0.2997, 0.4227],
        [0.0283, 0.1243, 0.6706, ..., 0.8895, 0.9340, 0.3578],
        [0.5715, 0.3219, 0.5943, ..., 0.7963, 0.2306, 0.0520],
        ...,
        [0.5526, 0.5939, 0.8483, ..., 0.1268, 0.8648, 0.0595],
        [0.3808, 0.4298, 0.4888, ..., 0.9584, 0.9257, 0.7482],
        [0.8607, 0.2471, 0.1412, ..., 0.7726, 0.9783, 0.5899]])""",
                 id="option_doc_example"),
]


@pytest.mark.parametrize("values, options, stop_gradient, expected", CASES)
def test_repr_matches_paddle(values, options, stop_gradient, expected):
    pycoll.set_printoptions(**options)
    tensor = pycoll.to_tensor(values(), stop_gradient=stop_gradient)
    assert repr(tensor) == expected
    assert str(tensor) == expected


def test_parameter_repr_wraps_the_tensor_repr():
    weight = pycoll.create_parameter([2], "float32")
    assert repr(weight).startswith("Parameter containing:\nTensor(shape=[2], dtype=float32, "
                                   "place=Place(cpu), stop_gradient=False,\n       [")


def test_format_body_takes_the_indent_of_its_prefix():
    """A longer prefix than ``Tensor(`` indents the continuation lines further, as paddle's
    ``indent = len(prefix) + 1`` does."""
    body = _printing.format_body(np.arange(4, dtype="int64").reshape(2, 2), indent=10)
    assert body == "[[0, 1],\n           [2, 3]]"


def test_format_body_prints_a_bfloat16_array_as_its_float_values():
    """As paddle 3.3.1 prints ``paddle.to_tensor([0.1, -2.0]).astype('bfloat16')``."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    values = np.array([0.1, -2.0], ml_dtypes.bfloat16)
    assert _printing.format_body(values) == "[0.10009766, -2.       ]"


def test_set_printoptions_keeps_what_is_not_given():
    pycoll.set_printoptions(precision=3)
    pycoll.set_printoptions(linewidth=100)
    assert _printing.format_body(np.array([0.5], "float32")) == "[0.500]"


@pytest.mark.parametrize("options", [dict(precision=1.5), dict(threshold="10"), dict(sci_mode=1)])
def test_set_printoptions_rejects_wrong_types_and_changes_nothing(options):
    with pytest.raises(TypeError, match="set_printoptions"):
        pycoll.set_printoptions(edgeitems=1, **options)
    assert _printing.format_body(np.arange(10, dtype="float32") / 4) == (
        "[0.        , 0.25000000, 0.50000000, 0.75000000, 1.        , 1.25000000,\n"
        "        1.50000000, 1.75000000, 2.        , 2.25000000]")


@pytest.mark.gpu
def test_gpu_tensor_header_names_the_gpu_as_paddle_does():
    """The body as paddle 3.3.1 prints these values on the CPU; the place as paddle names a GPU."""
    tensor = pycoll.to_tensor(np.array([1.5, -2.0], "float32"), place="gpu:0")
    assert repr(tensor) == ("Tensor(shape=[2], dtype=float32, place=Place(gpu:0), stop_gradient=True,\n"
                            "       [1.50000000, -2.       ])")
