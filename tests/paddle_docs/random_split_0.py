import pycoll
pycoll.seed(2023)
a_list = pycoll.io.random_split(range(10), [3, 7])  # type: ignore[arg-type, var-annotated]
print(len(a_list))
# output of the first subset
for idx, v in enumerate(a_list[0]):
    print(idx, v) # doctest: +SKIP("The output depends on the environment.")
# output of the second subset
for idx, v in enumerate(a_list[1]):
    print(idx, v) # doctest: +SKIP("The output depends on the environment.")
