"""paddle's ``paddle.distributed.utils`` package path; its submodule ``moe_utils`` holds the
expert-parallel exchanges ``global_scatter`` / ``global_gather`` (paddle exports nothing from the
package itself)."""

__all__: list = []
