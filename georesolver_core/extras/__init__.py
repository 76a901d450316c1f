"""Neighbours of GeoResolver: orthogonal residual mixing (seed 003) and dyadic Hankel attention (seed 004)."""
