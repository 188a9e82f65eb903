"""Each rank prints the variables frameworks read to place themselves, and one MPI passes through."""
import os

names = ["RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
         "PADDLE_TRAINER_ID", "PADDLE_TRAINERS_NUM", "PADDLE_CURRENT_ENDPOINT", "PADDLE_TRAINER_ENDPOINTS",
         "PADDLE_GLOBAL_RANK", "PADDLE_GLOBAL_SIZE", "PADDLE_LOCAL_RANK", "PADDLE_RANK_IN_NODE",
         "PADDLE_LOCAL_SIZE", "PADDLE_NNODES", "PADDLE_MASTER", "PADDLE_LOG_DIR", "FLAGS_selected_gpus",
         "CUDA_VISIBLE_DEVICES", "PYCOLL_LOG_LEVEL", "HYDRA_PASSED", "PYCOLL_TEST_GENV", "PYCOLL_STORE_TOKEN"]
print("environment OK rank=" + os.environ["RANK"] + " " + " ".join(f"{n}={os.environ.get(n)}" for n in names),
      flush=True)
