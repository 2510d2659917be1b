"""Face-landmark regression from a CSV read with pandas: each sample looks its row up with
DataFrame.iloc, decodes its PNG, rescales, random-crops and converts it in the training process.

Adapted from pytorch/tutorials beginner_source/data_loading_tutorial.py (BSD-3-Clause): the
FaceLandmarksDataset (pandas.read_csv, `iloc[idx, 0]` for the file name, `iloc[idx, 1:]` for the
landmarks), the Rescale / RandomCrop / ToTensor transforms, DataLoader(shuffle=True, num_workers=0).
Changed: 400 faces are drawn at start as PNG files (an ellipse and 68 landmark dots each) with their
CSV, images are read with PIL rather than skimage, batches of 16 train a small CNN that regresses
the 68 landmarks for 160 steps.

    python train.py [--steps N]
"""
import argparse
import os
import tempfile

import numpy as np
import pandas as pd
import torch
from PIL import Image, ImageDraw
from torch import nn
from torch.utils.data import DataLoader, Dataset

CACHE = False  # True: read the CSV into arrays and decode and rescale every face once; the crop stays per sample
FACES = 400
OUTPUT = 64
CROP = 56


def draw_faces(root):
    """PNG faces of assorted sizes with 68 landmarks on an ellipse, and the CSV the tutorial reads."""
    rng = np.random.default_rng(0)
    rows = []
    for i in range(FACES):
        w, h = int(rng.integers(250, 400)), int(rng.integers(280, 450))
        image = Image.new("RGB", (w, h), tuple(int(v) for v in rng.integers(0, 80, 3)))
        draw = ImageDraw.Draw(image)
        cx, cy, rx, ry = w / 2, h / 2, w * rng.uniform(0.25, 0.4), h * rng.uniform(0.3, 0.45)
        draw.ellipse([cx - rx, cy - ry, cx + rx, cy + ry], fill=tuple(int(v) for v in rng.integers(120, 255, 3)))
        angles = np.linspace(0, 2 * np.pi, 68, endpoint=False) + rng.uniform(0, 0.2)
        points = np.stack([cx + rx * 0.8 * np.cos(angles), cy + ry * 0.8 * np.sin(angles)], axis=1)
        for x, y in points:
            draw.ellipse([x - 1, y - 1, x + 1, y + 1], fill=(20, 20, 20))
        name = f"face_{i:04d}.png"
        image.save(os.path.join(root, name))
        rows.append([name] + points.reshape(-1).round(2).tolist())
    columns = ["image_name"] + [f"part_{k}_{axis}" for k in range(68) for axis in ("x", "y")]
    pd.DataFrame(rows, columns=columns).to_csv(os.path.join(root, "face_landmarks.csv"), index=False)


def rescale(image, landmarks):
    w, h = image.size
    if h > w:
        new_h, new_w = OUTPUT * h / w, OUTPUT
    else:
        new_h, new_w = OUTPUT, OUTPUT * w / h
    new_h, new_w = int(new_h), int(new_w)
    return np.asarray(image.resize((new_w, new_h), Image.BILINEAR)), landmarks * [new_w / w, new_h / h]


def random_crop(image, landmarks, rng):
    h, w = image.shape[:2]
    top, left = rng.integers(0, h - CROP + 1), rng.integers(0, w - CROP + 1)
    return image[top:top + CROP, left:left + CROP], landmarks - [left, top]


class FaceLandmarksDataset(Dataset):
    def __init__(self, csv_file, root_dir):
        self.landmarks_frame = pd.read_csv(csv_file)
        self.root_dir = root_dir
        self.rng = np.random.default_rng(1)
        self.cached = [self.load(i) for i in range(len(self.landmarks_frame))] if CACHE else None

    def __len__(self):
        return len(self.landmarks_frame)

    def load(self, idx):
        img_name = os.path.join(self.root_dir, self.landmarks_frame.iloc[idx, 0])
        image = Image.open(img_name).convert("RGB")
        landmarks = np.array([self.landmarks_frame.iloc[idx, 1:]], dtype=float).reshape(-1, 2)
        return rescale(image, landmarks)

    def __getitem__(self, idx):
        image, landmarks = self.cached[idx] if CACHE else self.load(idx)
        image, landmarks = random_crop(image, landmarks, self.rng)
        x = torch.from_numpy(image.transpose((2, 0, 1)).astype(np.float32) / 255.0)
        return x, torch.from_numpy(landmarks.reshape(-1).astype(np.float32) / CROP)


def model():
    return nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.ReLU(), nn.Conv2d(16, 32, 3, 2, 1), nn.ReLU(),
                         nn.Conv2d(32, 32, 3, 2, 1), nn.ReLU(), nn.Flatten(), nn.Linear(32 * 7 * 7, 136))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=160)
    args = parser.parse_args()
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as root:
        draw_faces(root)
        dataset = FaceLandmarksDataset(os.path.join(root, "face_landmarks.csv"), root)
        loader = DataLoader(dataset, batch_size=16, shuffle=True, num_workers=0)
        net = model()
        optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
        step, running = 0, 0.0
        while step < args.steps:
            for images, landmarks in loader:
                loss = nn.functional.mse_loss(net(images), landmarks)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                running = 0.9 * running + 0.1 * loss.item() if step else loss.item()
                step += 1
                if step >= args.steps:
                    break
    print(f"final loss {running:.4f}")


if __name__ == "__main__":
    main()
