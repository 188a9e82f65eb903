"""paddle's ``text.datasets``, read from local files in paddle's formats (``data_file=``, else paddle's
download cache under ~/.cache/paddle/dataset); pycoll never downloads."""
from pycoll.text.datasets.conll05 import Conll05st
from pycoll.text.datasets.imdb import Imdb
from pycoll.text.datasets.imikolov import Imikolov
from pycoll.text.datasets.movielens import Movielens
from pycoll.text.datasets.uci_housing import UCIHousing
from pycoll.text.datasets.wmt14 import WMT14
from pycoll.text.datasets.wmt16 import WMT16

__all__ = ["Conll05st", "Imdb", "Imikolov", "Movielens", "UCIHousing", "WMT14", "WMT16"]
