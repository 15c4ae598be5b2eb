__version__ = '9.9.0'
git_version = 'abcdef0123456789abcdef0123456789abcdef01'
