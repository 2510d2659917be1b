import os
print("sitecustomize:", os.environ.get("USER_SITECUSTOMIZE_RAN", "no"))
