"""Cookbook side: data modules (parse, decode, shell text, encode, emit) and the page."""
