"""voices"""
