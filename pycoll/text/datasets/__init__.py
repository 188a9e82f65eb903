"""paddle's ``text.datasets``, read from local files in paddle's formats (``data_file=``, else paddle's
download cache under ~/.cache/paddle/dataset); pycoll never downloads."""
from pycoll.text.datasets.imdb import Imdb
from pycoll.text.datasets.imikolov import Imikolov
from pycoll.text.datasets.movielens import Movielens
from pycoll.text.datasets.uci_housing import UCIHousing

__all__ = ["Imdb", "Imikolov", "Movielens", "UCIHousing"]
