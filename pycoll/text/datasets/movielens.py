"""paddle's ``text.datasets.Movielens``: the MovieLens 1M ratings (ml-1m.zip) joined with their user's
and movie's attributes."""
from __future__ import annotations

import re
import zipfile
from typing import Dict, List, Optional, Tuple

import numpy as np

from pycoll.io import Dataset
from pycoll.vision.datasets._files import check_mode, locate

URL = "https://dataset.bj.bcebos.com/movielens%2Fml-1m.zip"
age_table = [1, 18, 25, 35, 45, 50, 56]
_TITLE = re.compile(r"^(.*)\((\d+)\)$")  # 'Toy Story (1995)': the title and its year


class MovieInfo:
    """A movie: its id, genres and title (without the year)."""

    def __init__(self, index: str, categories: List[str], title: str) -> None:
        self.index = int(index)
        self.categories = categories
        self.title = title

    def value(self, categories_dict: Dict[str, int], movie_title_dict: Dict[str, int]) -> List[List[int]]:
        return [[self.index], [categories_dict[c] for c in self.categories],
                [movie_title_dict[w.lower()] for w in self.title.split()]]

    def __repr__(self) -> str:
        return f"<MovieInfo id({self.index}), title({self.title}), categories({self.categories})>"


class UserInfo:
    """A user: id, gender, age bracket (index into ``age_table``) and job id."""

    def __init__(self, index: str, gender: str, age: str, job_id: str) -> None:
        self.index = int(index)
        self.is_male = gender == "M"
        self.age = age_table.index(int(age))
        self.job_id = int(job_id)

    def value(self) -> List[List[int]]:
        return [[self.index], [0 if self.is_male else 1], [self.age], [self.job_id]]

    def __repr__(self) -> str:
        return (f"<UserInfo id({self.index}), gender({'M' if self.is_male else 'F'}), age({age_table[self.age]}), "
                f"job({self.job_id})>")


class Movielens(Dataset):
    """Sample i is 8 arrays: user id, gender (0 male, 1 female), age bracket, job, movie id, genre
    ids, title word ids, and the rating mapped to [-3, 5] (2 * stars - 5). Each rating goes to
    'test' with probability ``test_ratio``, drawn in file order from NumPy's legacy generator
    seeded with ``rand_seed`` (the draws paddle makes; pycoll leaves NumPy's global state alone).
    Genre and title-word ids number the sorted names (paddle numbers them in a set's order, which
    changes from run to run). ``data_file``: ml-1m.zip, else paddle's cache."""

    def __init__(self, data_file: Optional[str] = None, mode: str = "train", test_ratio: float = 0.1,
                 rand_seed: int = 0, download: bool = True) -> None:
        self.mode = check_mode(mode, "Movielens")
        self.data_file = locate(data_file, "data_file", "sentiment", URL, download, "Movielens")
        self.test_ratio = test_ratio
        self.rand_seed = rand_seed
        self._load_meta_info()
        self._load_data()

    def _load_meta_info(self) -> None:
        self.movie_info: Dict[int, MovieInfo] = {}
        self.user_info: Dict[int, UserInfo] = {}
        words, genres = set(), set()
        with zipfile.ZipFile(self.data_file) as package:
            with package.open("ml-1m/movies.dat") as movies:
                for line in movies:
                    movie_id, title, categories = line.decode("latin").strip().split("::")
                    title = _TITLE.match(title).group(1)
                    self.movie_info[int(movie_id)] = MovieInfo(movie_id, categories.split("|"), title)
                    genres.update(categories.split("|"))
                    words.update(w.lower() for w in title.split())
            with package.open("ml-1m/users.dat") as users:
                for line in users:
                    uid, gender, age, job, _ = line.decode("latin").strip().split("::")
                    self.user_info[int(uid)] = UserInfo(uid, gender, age, job)
        self.movie_title_dict = {w: i for i, w in enumerate(sorted(words))}
        self.categories_dict = {c: i for i, c in enumerate(sorted(genres))}

    def _load_data(self) -> None:
        self.data: List[List[List[float]]] = []
        draws = np.random.RandomState(self.rand_seed)
        is_test = self.mode == "test"
        with zipfile.ZipFile(self.data_file) as package, package.open("ml-1m/ratings.dat") as ratings:
            for line in ratings:
                if (draws.random_sample() < self.test_ratio) != is_test:
                    continue
                uid, movie_id, stars, _ = line.decode("latin").strip().split("::")
                movie, user = self.movie_info[int(movie_id)], self.user_info[int(uid)]
                self.data.append(user.value() + movie.value(self.categories_dict, self.movie_title_dict)
                                 + [[float(stars) * 2 - 5.0]])

    def __getitem__(self, idx: int) -> Tuple[np.ndarray, ...]:
        return tuple(np.array(d) for d in self.data[idx])

    def __len__(self) -> int:
        return len(self.data)
