import pycoll
model = pycoll.nn.Conv2D(3, 2, 3, bias_attr=True)
optimizer = pycoll.optimizer.SGD(learning_rate=0.01, parameters=model.parameters())
scaler = pycoll.amp.GradScaler(init_loss_scaling=1024)
data = pycoll.rand([10, 3, 32, 32])
with pycoll.amp.auto_cast():
    conv = model(data)
    loss = pycoll.mean(conv)
scaled = scaler.scale(loss)  # scale the loss
scaled.backward()            # do backward
scaler.minimize(optimizer, scaled)  # update parameters
optimizer.clear_grad()
