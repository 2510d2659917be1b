"""Present: the report assembled from the judged sections and the ranked advice (reporting), and
the renderers that draw it in each format (render)."""
