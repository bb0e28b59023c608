"""`sync lint`: do a module's commands use only flags their pinned SGLang version declares?"""
